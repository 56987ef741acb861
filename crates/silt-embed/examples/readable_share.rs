//! How much of some text a model reads (`silt_embed::readable`): the share
//! of content words it passes, and how many texts it reads whole.
//!
//! `cargo run --release -p silt-embed --example readable_share -- MODEL_DIR
//! FILE [--unread]` reads one text a line (an STS-B csv's last two columns
//! are its sentences); `-- MODEL_DIR --families N` reads the triggers of
//! `synthetic::lessons(N)`, made-up words of random letters. `--unread`
//! lists the words it does not pass. docs/JUDGES.md quotes its figures.

use std::path::Path;

use silt_core::ledger::synthetic;
use silt_embed::Encoder;
use silt_embed::readable::{is_content_word, readable_share, reads_word};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let encoder = Encoder::load(Path::new(&args[0])).unwrap_or_else(|e| panic!("{e}"));
    let texts: Vec<String> = if args[1] == "--families" {
        let n = args[2].parse().expect("N is a number of lessons");
        synthetic::lessons(n).into_iter().map(|l| l.when).collect()
    } else {
        std::fs::read_to_string(&args[1])
            .unwrap_or_else(|e| panic!("{}: {e}", args[1]))
            .lines()
            .flat_map(|l| {
                let cols: Vec<&str> = l.split('\t').collect();
                match cols.len() {
                    7.. => vec![cols[5].to_string(), cols[6].to_string()],
                    _ => vec![l.to_string()],
                }
            })
            .collect()
    };
    let unread = args.iter().any(|a| a == "--unread");
    let (mut seen, mut read, mut whole) = (0usize, 0usize, 0usize);
    for text in &texts {
        let words = encoder.word_pieces(text).unwrap_or_else(|e| panic!("{e}"));
        for &(word, pieces) in words.iter().filter(|w| is_content_word(w.0)) {
            seen += 1;
            if reads_word(word.chars().count(), pieces) {
                read += 1;
            } else if unread {
                println!("unread: {word} ({pieces} pieces)");
            }
        }
        if readable_share(words) >= 1.0 {
            whole += 1;
        }
    }
    println!(
        "content words read: {read} of {seen} ({:.1}%); texts read whole: {whole} of {}",
        100.0 * read as f64 / seen.max(1) as f64,
        texts.len()
    );
}
