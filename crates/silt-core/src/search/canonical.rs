//! Canonical URLs: two hits are the same page when their canonical URLs
//! are equal, whatever tracking, `www.` or trailing slash they carry.

/// Query parameters that only track the click.
const TRACKING: &[&str] = &[
    "fbclid", "gclid", "gclsrc", "msclkid", "mc_cid", "mc_eid", "ref", "ref_src", "referrer",
];

fn tracking(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    TRACKING.contains(&name.as_str()) || name.starts_with("utm_")
}

/// The canonical form of `raw`: scheme (https when none is given) and host
/// lowercased, `www.` stripped, the scheme's default port, the fragment,
/// a trailing slash and tracking parameters dropped. None when `raw` is
/// not an http(s) URL with a host.
pub fn canonical_url(raw: &str) -> Option<String> {
    let raw = raw.trim();
    let with_scheme = if raw.contains("://") {
        raw.to_string()
    } else {
        // "mailto:x@y" names another scheme; "example.com:8080/x" a port
        if let Some((scheme, rest)) = raw.split_once(':')
            && scheme.chars().all(|c| c.is_ascii_alphabetic())
            && !rest.starts_with(|c: char| c.is_ascii_digit())
        {
            return None;
        }
        format!("https://{raw}")
    };
    let url = url::Url::parse(&with_scheme).ok()?;
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    let host = url.host_str()?.to_ascii_lowercase();
    let host = host.strip_prefix("www.").unwrap_or(&host);
    let port = match url.port() {
        // the url crate already leaves out a scheme's default port
        Some(p) => format!(":{p}"),
        None => String::new(),
    };
    let path = url.path().trim_end_matches('/');
    let kept: Vec<(String, String)> = url
        .query_pairs()
        .filter(|(k, _)| !tracking(k))
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    let query = if kept.is_empty() {
        String::new()
    } else {
        let mut q = url::form_urlencoded::Serializer::new(String::new());
        for (k, v) in &kept {
            q.append_pair(k, v);
        }
        format!("?{}", q.finish())
    };
    Some(format!("{}://{host}{port}{path}{query}", url.scheme()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spec_case() {
        assert_eq!(
            canonical_url("HTTPS://WWW.Example.COM/a/b/").as_deref(),
            Some("https://example.com/a/b")
        );
    }

    #[test]
    fn ports_fragments_tracking_and_bare_hosts() {
        let c = |s: &str| canonical_url(s).unwrap();
        assert_eq!(c("http://example.com:80/x#top"), "http://example.com/x");
        assert_eq!(c("https://example.com:443/"), "https://example.com");
        assert_eq!(
            c("https://example.com:8443/x"),
            "https://example.com:8443/x"
        );
        assert_eq!(
            c("https://example.com/p?utm_source=a&id=7&fbclid=z&UTM_MEDIUM=b&ref=x"),
            "https://example.com/p?id=7"
        );
        assert_eq!(c("example.com/docs/"), "https://example.com/docs");
        assert_eq!(c("https://www.example.com"), c("https://example.com/"));
        assert_eq!(canonical_url("not a url"), None);
        assert_eq!(canonical_url("mailto:someone@example.com"), None);
        assert_eq!(canonical_url("ftp://example.com/f"), None);
        assert_eq!(c("example.com:8080/x/"), "https://example.com:8080/x");
    }
}
