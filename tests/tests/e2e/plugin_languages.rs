//! The example judges written in Python (componentize-py) and JavaScript
//! (componentize-js), built from examples/ by `.ci/example-plugins`,
//! installed as third-party plugins and asked through `sieve_ask` over MCP.
//! Both apply the same rule (shared words, kept within 0.3 of even), so
//! each must give the answers worked out by hand below.

use serde_json::{Value, json};
use silt_e2e::mcp::{call, json_of, serve};
use silt_e2e::{install_example, silt_binary};

const JUDGES: [&str; 2] = ["words-py", "words-js"];

fn probability(rows: &Value, id: &str) -> f64 {
    rows.as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .and_then(|r| r["probability"].as_f64())
        .unwrap_or_else(|| panic!("no row {id}: {rows}"))
}

#[tokio::test]
async fn judges_written_in_python_and_javascript_answer_sieve_ask() {
    let home = tempfile::tempdir().unwrap();
    let plugins = home.path().join("plugins");
    for name in JUDGES {
        install_example(&plugins, name);
    }

    // silt sees each as a third-party judge exporting the contract
    for name in JUDGES {
        let out = std::process::Command::new(silt_binary())
            .args(["plugins", "inspect", name, "--json"])
            .env("SILT_PLUGIN_PATH", &plugins)
            .env("SILT_CACHE_DIR", home.path().join("cache"))
            .output()
            .unwrap();
        let seen: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
        });
        assert_eq!(seen["kind"], "judge", "{seen:#}");
        assert!(
            seen["origin"]
                .as_str()
                .unwrap()
                .starts_with(plugins.to_str().unwrap()),
            "{seen:#}"
        );
        let exports = seen["exports"].to_string();
        assert!(exports.contains("silt:judge/judge@0.1.2"), "{seen:#}");
    }

    let client = serve(home.path(), home.path(), &[]).await;
    for name in JUDGES {
        let judged = json_of(
            &call(
                &client,
                "sieve_ask",
                json!({"question": "Is it a bug report?", "kind": "judge",
                       "yes": "a crash, an error or broken behaviour",
                       "no": "a request for a new feature",
                       "items": [{"id": "bug", "text": "fix crash on launch with an error"},
                                 {"id": "wish", "text": "add a new dark mode feature"},
                                 {"id": "neither", "text": "tidy the changelog"}],
                       "judge": name, "threshold": 0.0}),
            )
            .await,
        );
        assert_eq!(judged["judge"], name, "{judged:#}");
        let rows = &judged["results"];
        // two yes-words, no no-words: 0.5 + 0.3·2/3; the mirror for the
        // wish; no shared word at all stays at even
        for (id, want) in [("bug", 0.7), ("wish", 0.3), ("neither", 0.5)] {
            let got = probability(rows, id);
            assert!((got - want).abs() < 1e-9, "{name} {id}: {got} != {want}");
        }

        let chosen = json_of(
            &call(
                &client,
                "sieve_ask",
                json!({"question": "Which team owns this ticket?", "kind": "choose",
                       "options": {"web": "browser UI, CSS, React components",
                                   "api": "HTTP endpoints, authentication, database",
                                   "none": "no listed team fits"},
                       "items": ["the CSS of the React login form overflows"],
                       "judge": name}),
            )
            .await,
        );
        let row = &chosen["results"][0];
        assert_eq!(row["choice"], "web", "{name}: {chosen:#}");
        // weights 1 + shared words: web 3 (css, react), api 1, none 1
        let p = &row["probabilities"];
        for (label, want) in [("web", 0.6), ("api", 0.2), ("none", 0.2)] {
            let got = p[label].as_f64().unwrap();
            assert!((got - want).abs() < 1e-9, "{name} {label}: {got} != {want}");
        }

        let scored = json_of(
            &call(
                &client,
                "sieve_ask",
                json!({"question": "How bad is it?", "kind": "score",
                       "levels": ["a cosmetic blemish", "a crash or data loss"],
                       "items": ["the app crashes and we lose data"],
                       "judge": name}),
            )
            .await,
        );
        // "data" is shared with the second level only: weights 1 and 2
        // (the tool rounds probabilities to four places)
        let p = &scored["results"][0]["probabilities"];
        let got = p["a crash or data loss"].as_f64().unwrap();
        assert!((got - 2.0 / 3.0).abs() < 1e-4, "{name}: {scored:#}");
    }
    client.cancel().await.unwrap();
}
