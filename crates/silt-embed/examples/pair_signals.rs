//! What the embedding judge reads from each labelled lesson pair: the
//! cosines of the triggers (`cw`), the actions (`cp`) and the whole
//! lessons (`cl`), and the calibrated curves over them (`t` = same
//! trigger, `a` = related actions, `same_a` = paraphrase actions).
//!
//! `cargo run --release -p silt-embed --example pair_signals -- MODEL_DIR
//! [PAIRS]` (default docs/eval/ledger-pairs.jsonl), one tab-separated line
//! per pair. docs/JUDGES.md reads these to say why a merge needs
//! paraphrase actions: rewordings and rival choices share a cosine band.
use silt_embed::calibration::Calibration;
use silt_embed::{Encoder, cosine};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = std::path::Path::new(&args[0]);
    let encoder = Encoder::load(dir).unwrap();
    let cal = Calibration::for_folder(dir, encoder.kind()).unwrap();
    let text = std::fs::read_to_string(
        args.get(1)
            .map_or("docs/eval/ledger-pairs.jsonl", String::as_str),
    )
    .unwrap();
    for l in text.lines() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        let s = |k: &str, f: &str| v[k][f].as_str().unwrap().to_string();
        let (wa, wb, pa, pb) = (
            s("a", "when"),
            s("b", "when"),
            s("a", "prefer"),
            s("b", "prefer"),
        );
        let la = format!("when {wa}, {pa}");
        let lb = format!("when {wb}, {pb}");
        let e = encoder.encode(&[&wa, &wb, &pa, &pb, &la, &lb]).unwrap();
        let cw = if wa == wb { 1.0 } else { cosine(&e[0], &e[1]) };
        let cp = cosine(&e[2], &e[3]);
        let cl = cosine(&e[4], &e[5]);
        println!(
            "{}\t{}\t{}\tcw={:.2}\tcp={:.2}\tcl={:.2}\tt={:.2}\ta={:.2}\tsame_a={:.2}\t{} | {}",
            v["split"].as_str().unwrap(),
            v["label"].as_str().unwrap(),
            v["id"].as_str().unwrap(),
            cw,
            cp,
            cl,
            cal.same.p(cw),
            cal.related.p(cp),
            cal.same.p(cp),
            pa,
            pb
        );
    }
}
