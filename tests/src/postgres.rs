//! A database of its own for each test, on the throwaway PostgreSQL
//! server that `.ci/run` starts (`.ci/postgres`): created empty, dropped
//! when the test ends.

use std::sync::atomic::{AtomicU32, Ordering};

/// A test's database.
pub struct Database {
    /// A URL naming it, as a user would give `SILT_LEDGER_URL`.
    pub url: String,
    name: String,
    admin: String,
}

/// The server's superuser URL; a test that needs PostgreSQL fails (never
/// skips) without it.
pub fn admin_url() -> String {
    std::env::var("SILT_TEST_POSTGRES_URL").unwrap_or_else(|_| {
        panic!(
            "SILT_TEST_POSTGRES_URL must name a PostgreSQL server the tests may create databases \
             on: `.ci/run` starts one; by hand run `eval \"$(.ci/postgres start)\"`"
        )
    })
}

/// Runs `sql` on `url` (on a thread of its own: the `postgres` crate
/// must not block inside tokio's runtime, where most tests run).
pub fn sql(url: &str, sql: &str) -> Vec<postgres::Row> {
    let (url, sql) = (url.to_string(), sql.to_string());
    std::thread::spawn(move || {
        let mut c = postgres::Client::connect(&url, postgres::NoTls)
            .unwrap_or_else(|e| panic!("connecting to {url}: {e}"));
        c.query(sql.as_str(), &[])
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    })
    .join()
    .unwrap()
}

/// The one number `sql` selects.
pub fn count(url: &str, query: &str) -> i64 {
    sql(url, query)[0].get(0)
}

/// A new, empty database.
pub fn database() -> Database {
    static N: AtomicU32 = AtomicU32::new(0);
    let admin = admin_url();
    let name = format!(
        "silt_test_{}_{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    );
    sql(&admin, &format!("CREATE DATABASE {name}"));
    let base = admin.rsplit_once('/').map(|(b, _)| b).unwrap_or(&admin);
    Database {
        url: format!("{base}/{name}"),
        name,
        admin,
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        let (admin, name) = (self.admin.clone(), self.name.clone());
        // WITH (FORCE): a server a test killed may still hold a session
        let _ = std::thread::spawn(move || {
            if let Ok(mut c) = postgres::Client::connect(&admin, postgres::NoTls) {
                let _ = c.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
            }
        })
        .join();
    }
}
