//! `sieve_triage_threads` over stdio: the result shape on the lexical
//! judge, and clear errors for bad input.

use serde_json::json;
use silt_e2e::mcp::{call, json_of, serve, text_of};

#[tokio::test(flavor = "multi_thread")]
async fn triage_over_stdio_buckets_threads_and_refuses_bad_input() {
    let home = tempfile::tempdir().unwrap();
    let client = serve(home.path(), home.path(), &[]).await;
    let threads = json!([
        {"thread_id": "a", "status": "idle", "complete": true,
         "contract": {"title": "Deploy", "first_prompt": "Deploy the service. Acceptance criteria: it answers on port 80.",
                      "human_amendments": []},
         "events": [
            {"id": "e1", "ts": "1", "role": "user", "text": "Deploy it please."},
            {"id": "e2", "ts": "2", "role": "assistant",
             "text": "The build passes. Which region should I deploy to? I am waiting for your answer."},
            {"id": "e3", "ts": "3", "role": "tool", "kind": "tool_result", "text": "ok"}
         ]},
        {"thread_id": "b", "events": [
            {"id": "x1", "role": "assistant", "text": "Refactored the parser; all tests pass."}
        ]}
    ]);
    let out = json_of(&call(&client, "sieve_triage_threads", json!({"threads": threads})).await);
    let threads = out["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 2);
    let a = threads.iter().find(|t| t["thread_id"] == "a").unwrap();
    assert_eq!(a["coverage"], "full");
    assert_eq!(a["snapshot"], json!({"last_event_id": "e3", "events": 3}));
    let req = &a["requests"][0];
    assert_eq!(req["event_id"], "e2");
    assert!(req["text"].as_str().unwrap().starts_with("Which region"));
    assert_eq!(req["source_event_ids"], json!(["e2", "e3"]));
    assert!(req["probabilities"]["request"].as_f64().is_some());
    assert!(
        a["one_action_remains"].as_f64().is_some(),
        "acceptance criteria were stated"
    );
    let b = threads.iter().find(|t| t["thread_id"] == "b").unwrap();
    assert_eq!(b["bucket"], "clear");
    assert_eq!(b["requests"], json!([]));
    assert!(out["requests"].as_u64().unwrap() >= 1);

    for (args, needle) in [
        (json!({"threads": []}), "threads is empty"),
        (
            json!({"threads": [{"thread_id": "", "events": []}]}),
            "thread_id is empty",
        ),
        (
            json!({"threads": [{"thread_id": "t", "events": []}], "request_threshold": 3}),
            "request_threshold",
        ),
        (json!({"threads": [{"thread_id": "t"}]}), "events"),
    ] {
        let r = call(&client, "sieve_triage_threads", args.clone()).await;
        assert_eq!(r.is_error, Some(true), "{args} should fail");
        assert!(text_of(&r).contains(needle), "{args}: {}", text_of(&r));
    }
    client.cancel().await.unwrap();
}
