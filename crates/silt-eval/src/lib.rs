//! `silt eval`: how well a judge serves silt's pipelines, measured on
//! labelled data (the committed sets in docs/eval, or a file the user
//! gives). It ships in the `silt` binary because users measure their own
//! judges with it.

#![deny(missing_docs)]

pub mod judge;
pub mod ledger;
pub mod sleep;
pub mod verify;
