//! `sieve_grep`'s pure parts: what the judge reads for a file (a preview
//! with an outline) or for a stretch of one (a function span or a fixed
//! chunk). The walk and the reads are the host's.

pub mod evidence;
pub mod run;
pub mod units;
