//! Plugin signatures: ed25519 (ed25519-dalek) over what a plugin is, its
//! name and the digests of its component and manifest, so one signature
//! checks the same way whichever road the plugin came by (a folder, a URL
//! or an OCI registry). The signature lives beside the manifest in
//! `plugin.sig`.
//!
//! Why ed25519 keys in silt.toml rather than sigstore: a key is 32 bytes a
//! team can paste into a config and review, verification needs no network
//! and no certificate authority, and nothing here depends on a transparency
//! log being reachable from a build machine.

use std::path::Path;

use anyhow::{Context, Result, bail};
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};

/// The file beside `plugin.toml` that holds a plugin's signature.
pub const SIGNATURE_FILE: &str = "plugin.sig";

/// A public key as silt.toml and `plugin.sig` write it.
const KEY_PREFIX: &str = "ed25519:";

/// What is signed: a fixed label (so a signature made for something else
/// never reads as a plugin's), the name and both digests, one per line.
fn message(name: &str, component: &str, manifest: &str) -> Vec<u8> {
    format!("silt plugin signature v1\n{name}\n{component}\n{manifest}\n").into_bytes()
}

/// `ed25519:<64 hex digits>` for a key.
pub fn key_text(key: &VerifyingKey) -> String {
    format!("{KEY_PREFIX}{}", hex::encode(key.as_bytes()))
}

/// Reads `ed25519:<64 hex digits>`.
pub fn parse_key(text: &str) -> Result<VerifyingKey> {
    let hex_part = text.trim().strip_prefix(KEY_PREFIX).with_context(|| {
        format!("'{text}' is not a public key: write it as ed25519:<64 hex digits>")
    })?;
    let bytes: [u8; 32] = hex::decode(hex_part)
        .ok()
        .and_then(|b| b.try_into().ok())
        .with_context(|| format!("'{text}' is not a public key: it needs 64 hex digits"))?;
    VerifyingKey::from_bytes(&bytes).with_context(|| format!("'{text}' is not a valid ed25519 key"))
}

/// The contents of `plugin.sig`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignatureFile {
    /// The signer's public key, `ed25519:<hex>`.
    pub key: String,
    /// The signature, 128 hex digits.
    pub signature: String,
}

impl SignatureFile {
    /// The file in folder `dir`, if there is one.
    pub fn read(dir: &Path) -> Result<Option<SignatureFile>> {
        let path = dir.join(SIGNATURE_FILE);
        match std::fs::read_to_string(&path) {
            Ok(text) => toml::from_str(&text)
                .map(Some)
                .with_context(|| format!("{} is not a signature file", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
    }

    /// The text of `plugin.sig`.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("two strings serialise")
    }

    /// The signer's key when the signature holds for these digests.
    pub fn verify(&self, name: &str, component: &str, manifest: &str) -> Result<VerifyingKey> {
        let key = parse_key(&self.key)?;
        let bytes: [u8; 64] = hex::decode(&self.signature)
            .ok()
            .and_then(|b| b.try_into().ok())
            .context("the signature is not 128 hex digits")?;
        // strict: refuses weak keys and malleable signatures
        key.verify_strict(
            &message(name, component, manifest),
            &Signature::from_bytes(&bytes),
        )
        .map_err(|_| {
            anyhow::anyhow!(
                "the signature by {} does not match these bytes: the component or its \
                     manifest changed after it was signed",
                self.key
            )
        })?;
        Ok(key)
    }
}

/// A signing key, kept as the 64 hex digits of its secret seed.
pub struct SecretKey(SigningKey);

impl SecretKey {
    /// A new key from the operating system's random source.
    pub fn generate() -> Result<SecretKey> {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).map_err(|e| anyhow::anyhow!("no randomness: {e}"))?;
        Ok(SecretKey(SigningKey::from_bytes(&seed)))
    }

    /// Reads a key file as [`SecretKey::to_text`] wrote it (`silt plugins keygen`).
    pub fn read(path: &Path) -> Result<SecretKey> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the secret key {}", path.display()))?;
        let seed: [u8; 32] = hex::decode(text.trim())
            .ok()
            .and_then(|b| b.try_into().ok())
            .with_context(|| {
                format!(
                    "{} is not a secret key made by `silt plugins keygen`",
                    path.display()
                )
            })?;
        Ok(SecretKey(SigningKey::from_bytes(&seed)))
    }

    /// The secret's file contents.
    pub fn to_text(&self) -> String {
        format!("{}\n", hex::encode(self.0.to_bytes()))
    }

    /// The public key that checks this key's signatures.
    pub fn public(&self) -> VerifyingKey {
        self.0.verifying_key()
    }

    /// Signs plugin `name` with the digests (`sha256:<hex>`) of its component and manifest.
    pub fn sign(&self, name: &str, component: &str, manifest: &str) -> SignatureFile {
        let signature = self.0.sign(&message(name, component, manifest));
        SignatureFile {
            key: key_text(&self.public()),
            signature: hex::encode(signature.to_bytes()),
        }
    }
}

/// The keys a user trusts (`[plugins] trusted_keys`). When any is listed,
/// every third-party plugin must carry a valid signature by one of them.
#[derive(Debug, Clone, Default)]
pub struct Trust {
    keys: Vec<VerifyingKey>,
}

impl Trust {
    /// The keys of `[plugins] trusted_keys`, each `ed25519:<64 hex digits>`; one
    /// that does not parse is an error.
    pub fn from_config(keys: &[String]) -> Result<Trust> {
        let keys = keys
            .iter()
            .map(|k| parse_key(k).context("in silt.toml's [plugins] trusted_keys"))
            .collect::<Result<_>>()?;
        Ok(Trust { keys })
    }

    /// Whether any key is listed, so every plugin checked must be signed by one.
    pub fn requires_signatures(&self) -> bool {
        !self.keys.is_empty()
    }

    /// Who signed plugin `name` with these digests: None when unsigned.
    /// An error when a signature is there but false, or when trusted keys
    /// are set and it is missing or by another key.
    pub fn check(
        &self,
        name: &str,
        signature: Option<&SignatureFile>,
        component: &str,
        manifest: &str,
    ) -> Result<Option<Signed>> {
        let Some(sig) = signature else {
            if self.requires_signatures() {
                bail!(
                    "plugin '{name}' is not signed, and silt.toml lists trusted_keys: ask its \
                     publisher for a signed build, or sign it yourself with \
                     `silt plugins sign` and a key you trust"
                );
            }
            return Ok(None);
        };
        let key = sig
            .verify(name, component, manifest)
            .with_context(|| format!("plugin '{name}' refused"))?;
        let trusted = self.keys.contains(&key);
        if self.requires_signatures() && !trusted {
            bail!(
                "plugin '{name}' is signed by {}, which is not in silt.toml's [plugins] \
                 trusted_keys: add the key there if you trust its publisher",
                sig.key
            );
        }
        Ok(Some(Signed {
            key: sig.key.clone(),
            trusted,
        }))
    }
}

/// A verified signer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Signed {
    /// The signer's public key, `ed25519:<hex>`.
    pub key: String,
    /// Listed in trusted_keys.
    pub trusted: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_holds_for_its_bytes_only() {
        let secret = SecretKey::generate().unwrap();
        let sig = secret.sign("p", "sha256:aa", "sha256:bb");
        assert_eq!(
            sig.verify("p", "sha256:aa", "sha256:bb").unwrap(),
            secret.public()
        );
        for (n, c, m) in [
            ("q", "sha256:aa", "sha256:bb"),
            ("p", "sha256:ab", "sha256:bb"),
            ("p", "sha256:aa", "sha256:bc"),
        ] {
            let err = sig.verify(n, c, m).unwrap_err().to_string();
            assert!(err.contains("does not match these bytes"), "{err}");
        }
        // the text forms read back
        let again: SignatureFile = toml::from_str(&sig.to_toml()).unwrap();
        assert_eq!(again, sig);
        assert_eq!(
            parse_key(&key_text(&secret.public())).unwrap(),
            secret.public()
        );
        assert!(parse_key("ed25519:abcd").is_err());
        assert!(parse_key("rsa:00").is_err());
    }

    #[test]
    fn trusted_keys_require_a_signature_by_one_of_them() {
        let ours = SecretKey::generate().unwrap();
        let theirs = SecretKey::generate().unwrap();
        let open = Trust::default();
        let strict = Trust::from_config(&[key_text(&ours.public())]).unwrap();
        let (c, m) = ("sha256:aa", "sha256:bb");
        let by_ours = ours.sign("p", c, m);
        let by_theirs = theirs.sign("p", c, m);

        assert_eq!(open.check("p", None, c, m).unwrap(), None);
        assert!(
            !open
                .check("p", Some(&by_theirs), c, m)
                .unwrap()
                .unwrap()
                .trusted
        );
        assert!(
            strict
                .check("p", Some(&by_ours), c, m)
                .unwrap()
                .unwrap()
                .trusted
        );
        let unsigned = strict.check("p", None, c, m).unwrap_err().to_string();
        assert!(unsigned.contains("not signed"), "{unsigned}");
        let other = strict
            .check("p", Some(&by_theirs), c, m)
            .unwrap_err()
            .to_string();
        assert!(other.contains("not in silt.toml"), "{other}");
        // a false signature is refused even when no key is required
        let tampered = format!(
            "{:#}",
            open.check("p", Some(&by_ours), "sha256:ff", m).unwrap_err()
        );
        assert!(tampered.contains("does not match"), "{tampered}");
    }
}
