//! PDF to text in a child process, so a hostile or huge PDF can cost at
//! most its limits: 30 s, 1 GiB of address space, the first 200 pages.
//! The child runs `pdftotext` (poppler) when it is installed, else silt
//! itself (`silt pdf-text`, lopdf and pdf-extract). The text is
//! NFKC-normalised so ligatures match typed quotes. An encrypted PDF, one
//! with no text layer (scanned) or one that cannot be parsed is an error
//! with its reason.

use std::io::Write;
use std::process::Stdio;
use std::time::Duration;

use unicode_normalization::UnicodeNormalization;

use crate::error::PdfError;

/// How long the child may take before the PDF is given up on.
pub const TIME_LIMIT: Duration = Duration::from_secs(30);
/// The child's address space in bytes (1 GiB, `RLIMIT_AS`; Unix only).
pub const MEMORY_LIMIT: u64 = 1 << 30;
/// Pages read from the start of a PDF; the rest are left out.
pub const MAX_PAGES: u32 = 200;

/// Exit code of `silt pdf-text` for a PDF that cannot be read (the reason
/// is on stderr).
const UNREADABLE: i32 = 3;

/// Whether the bytes are a PDF (by their signature, whatever the server said).
pub fn is_pdf(bytes: &[u8]) -> bool {
    bytes.starts_with(b"%PDF-")
}

/// The text of a PDF, extracted in a child process under the limits.
pub async fn to_text(bytes: &[u8]) -> Result<String, PdfError> {
    let dir = tempfile::tempdir().map_err(|e| PdfError(format!("no temporary folder ({e})")))?;
    let path = dir.path().join("source.pdf");
    std::fs::File::create(&path)
        .and_then(|mut f| f.write_all(bytes))
        .map_err(|e| PdfError(format!("cannot write a temporary copy ({e})")))?;
    let mut cmd = match which("pdftotext") {
        Some(pdftotext) => {
            let mut c = tokio::process::Command::new(pdftotext);
            c.arg("-l")
                .arg(MAX_PAGES.to_string())
                .arg("-enc")
                .arg("UTF-8")
                .arg(&path)
                .arg("-");
            c
        }
        None => {
            let exe = std::env::current_exe().map_err(|e| PdfError(e.to_string()))?;
            let mut c = tokio::process::Command::new(exe);
            c.arg("pdf-text").arg(&path);
            c
        }
    };
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    limit_memory(&mut cmd);
    let child = cmd
        .spawn()
        .map_err(|e| PdfError(format!("cannot start the text extractor ({e})")))?;
    let output = match tokio::time::timeout(TIME_LIMIT, child.wait_with_output()).await {
        Ok(Ok(o)) => o,
        Ok(Err(e)) => return Err(PdfError(format!("the text extractor failed ({e})"))),
        Err(_) => {
            return Err(PdfError(format!(
                "text extraction took more than {} s",
                TIME_LIMIT.as_secs()
            )));
        }
    };
    if !output.status.success() {
        let reason = String::from_utf8_lossy(&output.stderr);
        let reason = reason.trim();
        let reason = if reason.is_empty() {
            format!("the extractor stopped ({})", output.status)
        } else {
            reason.lines().last().unwrap_or(reason).to_string()
        };
        return Err(PdfError(reason));
    }
    let text: String = String::from_utf8_lossy(&output.stdout).nfkc().collect();
    if text.trim().is_empty() {
        return Err(PdfError("no text layer (a scanned document?)".into()));
    }
    Ok(text)
}

fn which(program: &str) -> Option<std::path::PathBuf> {
    silt_config::env::search_path()
        .into_iter()
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

#[cfg(unix)]
fn limit_memory(cmd: &mut tokio::process::Command) {
    // SAFETY: setrlimit is async-signal-safe and touches only the child.
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: MEMORY_LIMIT as libc::rlim_t,
                rlim_max: MEMORY_LIMIT as libc::rlim_t,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

#[cfg(not(unix))]
fn limit_memory(_: &mut tokio::process::Command) {}

/// `silt pdf-text FILE`: the child side. Prints the text of the first
/// [`MAX_PAGES`] pages, or exits with [`UNREADABLE`] and the reason.
pub fn child_main(path: &std::path::Path) -> ! {
    let fail = |reason: String| -> ! {
        eprintln!("{reason}");
        std::process::exit(UNREADABLE)
    };
    let bytes = std::fs::read(path).unwrap_or_else(|e| fail(format!("cannot read it ({e})")));
    let mut doc = lopdf::Document::load_mem(&bytes)
        .unwrap_or_else(|e| fail(format!("cannot be parsed ({e})")));
    if doc.is_encrypted() {
        fail("it is encrypted".into());
    }
    let pages = doc.get_pages().len() as u32;
    if pages > MAX_PAGES {
        let beyond: Vec<u32> = (MAX_PAGES + 1..=pages).collect();
        doc.delete_pages(&beyond);
    }
    let mut trimmed = Vec::new();
    doc.save_to(&mut trimmed)
        .unwrap_or_else(|e| fail(format!("cannot be parsed ({e})")));
    // pdf-extract panics on some malformed content streams (found by
    // fuzzing): that is this PDF's fault, reported as such, not a crash
    std::panic::set_hook(Box::new(|_| {}));
    let text = match std::panic::catch_unwind(|| pdf_extract::extract_text_from_mem(&trimmed)) {
        Ok(Ok(text)) => text,
        Ok(Err(e)) => fail(format!("cannot be parsed ({e})")),
        Err(panic) => {
            let why = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("no reason given");
            fail(format!(
                "cannot be read: its text layer is malformed ({why})"
            ))
        }
    };
    print!("{text}");
    std::process::exit(0)
}
