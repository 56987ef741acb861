//! A model a judge loads on its first call and keeps for the life of its
//! instance (the host keeps such judges warm with `limits.reuse_calls`).

use std::cell::RefCell;
use std::thread::LocalKey;

use silt_core::types::{JudgeError, JudgeInfo};

/// Runs `f` on the value in `slot`, loading it with `load` first if the
/// slot is empty. A failed load is not kept: the next call tries again.
pub fn with_loaded<T, R>(
    slot: &'static LocalKey<RefCell<Option<T>>>,
    load: impl FnOnce() -> Result<T, JudgeError>,
    f: impl FnOnce(&mut T) -> Result<R, JudgeError>,
) -> Result<R, JudgeError> {
    slot.with(|cell| {
        let mut loaded = cell.borrow_mut();
        if loaded.is_none() {
            *loaded = Some(load()?);
        }
        f(loaded.as_mut().expect("loaded above"))
    })
}

/// What a judge whose model did not load says of itself: `info` cannot
/// fail, so it describes itself and its first ask says what is wrong.
pub fn unloaded(name: &str, preferred_batch_size: u32) -> JudgeInfo {
    JudgeInfo {
        name: name.into(),
        version: format!("{}+unloaded", env!("CARGO_PKG_VERSION")),
        deterministic: true,
        cost_per_million_input_tokens: 0.0,
        preferred_batch_size,
    }
}
