//! How silt touches the file system: reading beneath a folder with no
//! window between check and read, keeping its own state private, and the
//! repository walk grep scores.

#![deny(missing_docs)]

pub mod beneath;
pub mod private;
pub mod walk;
