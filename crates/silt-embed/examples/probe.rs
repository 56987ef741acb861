//! Prints cosines between sentence pairs under a model folder: a quick look
//! at what the encoder sees.
//!
//! Usage: `cargo run --release -p silt-embed --example probe -- DIR "a" "b" ["c" ...]`
//! (every text against the first).

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (dir, texts) = args.split_first().expect("usage: probe DIR TEXT TEXT...");
    let started = std::time::Instant::now();
    let encoder =
        silt_embed::Encoder::load(std::path::Path::new(dir)).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("loaded {:?} in {:?}", encoder.kind(), started.elapsed());
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let v = encoder.encode(&refs).unwrap_or_else(|e| panic!("{e}"));
    println!("{:?}", &v[0][..5]);
    for (t, e) in texts.iter().zip(&v).skip(1) {
        println!("{:.4}  {t}", silt_embed::cosine(&v[0], e));
    }
}
