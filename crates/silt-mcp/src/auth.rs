//! Who may call the shared server: whoever can read the owner's token file.
//!
//! The HTTP server reads files and writes the ledger with its owner's
//! rights, and loopback is reachable by every user of the machine, so
//! `Host`/`Origin` checks (which stop browsers) are not enough. Every
//! request must carry `Authorization: Bearer <token>`, where the token is a
//! random secret in a file only the owner can read (0600, in the owner's
//! config folder). A bearer header rather than a Unix socket because every
//! MCP client that speaks streamable HTTP (Claude Code, the Inspector, the
//! SDKs) can send a header, and none can dial a socket; the file's
//! permissions give the same trust boundary a socket's would.

use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// Random bytes in a new token (hex in the file: 64 characters).
const TOKEN_BYTES: usize = 32;

/// The shortest token accepted from a file the owner wrote by hand.
const MIN_TOKEN_CHARS: usize = 32;

/// The server's secret and where it lives (for messages).
#[derive(Clone)]
pub struct Token {
    secret: Arc<str>,
    /// The token file (0600, in the owner's config folder).
    pub path: PathBuf,
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // never print the secret
        f.debug_struct("Token").field("path", &self.path).finish()
    }
}

impl Token {
    /// The secret, for `silt http-token` and registration lines.
    pub fn secret(&self) -> &str {
        &self.secret
    }

    /// Reads the token at `path`, creating it (and its folder, 0700) when
    /// missing. Refuses a file other users could read or that someone
    /// else owns: its secret would no longer tell the owner apart.
    pub fn load_or_create(path: &Path) -> Result<Token> {
        match std::fs::symlink_metadata(path) {
            Ok(_) => Token::load(path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => match Token::create(path) {
                Ok(t) => Ok(t),
                // another server created it between our look and our create
                Err(_) if path.exists() => Token::load(path),
                Err(e) => Err(e),
            },
            Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
    }

    fn load(path: &Path) -> Result<Token> {
        let meta = std::fs::symlink_metadata(path)
            .with_context(|| format!("cannot read the token file {}", path.display()))?;
        if !meta.file_type().is_file() {
            bail!(
                "the token file {} is not a regular file (a symlink or folder); remove it and \
                 silt creates a new one",
                path.display()
            );
        }
        // SAFETY: geteuid has no preconditions and cannot fail
        let me = unsafe { libc::geteuid() };
        if meta.uid() != me {
            bail!(
                "the token file {} belongs to uid {}, not to you (uid {me}); remove it and silt \
                 creates a new one",
                path.display(),
                meta.uid()
            );
        }
        if meta.mode() & 0o077 != 0 {
            bail!(
                "the token file {} can be read by other users (mode {:o}); run `chmod 600 {}`",
                path.display(),
                meta.mode() & 0o777,
                path.display()
            );
        }
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the token file {}", path.display()))?;
        let secret = text.trim();
        if secret.len() < MIN_TOKEN_CHARS || secret.chars().any(|c| c.is_whitespace()) {
            bail!(
                "the token file {} must hold one secret of at least {MIN_TOKEN_CHARS} characters \
                 without spaces; remove it and silt creates a new one",
                path.display()
            );
        }
        Ok(Token {
            secret: secret.into(),
            path: path.to_path_buf(),
        })
    }

    fn create(path: &Path) -> Result<Token> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
            && !dir.exists()
        {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
                .with_context(|| format!("cannot restrict {}", dir.display()))?;
        }
        let mut bytes = [0u8; TOKEN_BYTES];
        getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("no random source: {e}"))?;
        let secret = hex::encode(bytes);
        // create_new and 0600 from the first byte: never readable by others,
        // never clobbering a token another server just wrote
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)
            .with_context(|| format!("cannot create the token file {}", path.display()))?;
        file.write_all(format!("{secret}\n").as_bytes())
            .and_then(|_| file.sync_all())
            .with_context(|| format!("cannot write the token file {}", path.display()))?;
        Ok(Token {
            secret: secret.into(),
            path: path.to_path_buf(),
        })
    }

    /// Whether an `Authorization` header value carries this token.
    fn admits(&self, header: Option<&HeaderValue>) -> bool {
        let Some(given) = header.and_then(|h| h.to_str().ok()) else {
            return false;
        };
        let Some(given) = given
            .strip_prefix("Bearer ")
            .or_else(|| given.strip_prefix("bearer "))
        else {
            return false;
        };
        constant_time_eq(given.trim().as_bytes(), self.secret.as_bytes())
    }
}

/// Equality whose time does not depend on where the inputs differ.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Axum middleware: 401 with a JSON body unless the request carries the token.
pub async fn require_token(State(token): State<Token>, req: Request, next: Next) -> Response {
    if token.admits(req.headers().get(header::AUTHORIZATION)) {
        return next.run(req).await;
    }
    let body = serde_json::json!({"error": {
        "code": "unauthorized",
        "message": "this silt server needs its owner's token",
        "hint": format!(
            "send the header `Authorization: Bearer <token>`, the token being the contents of {} \
             (`silt http-token` prints it)",
            token.path.display()
        ),
    }});
    let mut response = (
        StatusCode::UNAUTHORIZED,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response();
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"silt\""),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_token_is_private_and_read_back_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new").join("http-token");
        let made = Token::load_or_create(&path).unwrap();
        assert_eq!(made.secret().len(), 2 * TOKEN_BYTES);
        let mode = std::fs::metadata(&path).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let dir_mode = std::fs::metadata(path.parent().unwrap()).unwrap().mode() & 0o777;
        assert_eq!(dir_mode, 0o700);
        let again = Token::load_or_create(&path).unwrap();
        assert_eq!(again.secret(), made.secret());
    }

    #[test]
    fn a_token_others_can_read_or_too_short_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("http-token");
        std::fs::write(&path, "x".repeat(64)).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = Token::load_or_create(&path).unwrap_err().to_string();
        assert!(err.contains("chmod 600"), "{err}");
        std::fs::write(&path, "short").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let err = Token::load_or_create(&path).unwrap_err().to_string();
        assert!(err.contains("at least"), "{err}");
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", &path).unwrap();
        let err = Token::load_or_create(&path).unwrap_err().to_string();
        assert!(err.contains("not a regular file"), "{err}");
    }

    #[test]
    fn only_the_exact_bearer_token_is_admitted() {
        let dir = tempfile::tempdir().unwrap();
        let token = Token::load_or_create(&dir.path().join("t")).unwrap();
        let header = |v: &str| HeaderValue::from_str(v).unwrap();
        assert!(token.admits(Some(&header(&format!("Bearer {}", token.secret())))));
        assert!(!token.admits(None));
        assert!(!token.admits(Some(&header(token.secret()))));
        assert!(!token.admits(Some(&header("Bearer "))));
        let mut wrong = token.secret().to_string();
        wrong.replace_range(0..1, if wrong.starts_with('0') { "1" } else { "0" });
        assert!(!token.admits(Some(&header(&format!("Bearer {wrong}")))));
        let longer = format!("Bearer {}0", token.secret());
        assert!(!token.admits(Some(&header(&longer))));
    }
}
