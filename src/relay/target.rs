//! Where a relayed request goes: the upstream's name from the request target, and the
//! upstream URL built from parts — the configured scheme, authority and path prefix, then the
//! checked rest of the path. Nothing the client sends can change the first three: gluing
//! strings (`{base}{rest}`) let `//anthropic/v1/…` move the port or the host
//! (`http://127.0.0.1:PORT` + `c/v1/…`), and `/anthropic/../openai/…` climb out of the prefix
//! at an upstream that normalises paths, with the key on the request either way.

use http::Uri;
use http::uri::{Authority, Scheme};

/// An upstream's base URL, parsed once when the relay starts.
#[derive(Debug, Clone)]
pub struct Base {
    scheme: Scheme,
    authority: Authority,
    /// The path prefix without a trailing `/`: `""` or `/compatible-mode`.
    prefix: String,
    /// As configured, without a trailing `/`: it names the upstream in health targets.
    text: String,
}

impl Base {
    /// `http(s)://host[:port][/prefix]`, with no query or fragment.
    pub fn parse(text: &str) -> Result<Base, String> {
        let text = text.trim().trim_end_matches('/');
        let uri: Uri = text.parse().map_err(|err| format!("not a URL ({err})"))?;
        let scheme = uri
            .scheme()
            .filter(|s| **s == Scheme::HTTP || **s == Scheme::HTTPS)
            .ok_or("must start with http:// or https://")?
            .clone();
        let authority = uri.authority().ok_or("has no host")?.clone();
        if authority.host().is_empty() {
            return Err("has no host".into());
        }
        if uri.query().is_some() || text.contains('#') {
            return Err("must not have a query or a fragment".into());
        }
        let prefix = uri.path().trim_end_matches('/').to_string();
        if !prefix.is_empty() {
            check_segments(&prefix).map_err(|why| format!("its path {why}"))?;
        }
        Ok(Base {
            scheme,
            authority,
            prefix,
            text: text.to_string(),
        })
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The upstream URL for a checked [`Target`]: this base's scheme, authority and prefix,
    /// then the target's path and query.
    pub fn join(&self, target: &Target) -> Result<Uri, http::Error> {
        let mut path = String::with_capacity(
            self.prefix.len()
                + target.path.len()
                + target.query.as_ref().map_or(0, |q| q.len() + 1),
        );
        path.push_str(&self.prefix);
        path.push_str(&target.path);
        if path.is_empty() {
            path.push('/');
        }
        if let Some(query) = &target.query {
            path.push('?');
            path.push_str(query);
        }
        Uri::builder()
            .scheme(self.scheme.clone())
            .authority(self.authority.clone())
            .path_and_query(path)
            .build()
    }
}

/// A request target the relay will forward: `/{name}{path}?{query}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The upstream's name: the first segment.
    pub name: String,
    /// The rest of the path: `""` or `/seg/…`, every segment checked.
    pub path: String,
    pub query: Option<String>,
}

impl Target {
    /// Splits and checks a request target. The path must start with exactly one `/`, and
    /// no segment may be empty, `.` or `..` (raw or percent-encoded), or hide a `/` or `\`
    /// (`%2f`, `%5c`): whatever a server along the way normalises, the path stays under
    /// the upstream's prefix.
    pub fn parse(uri: &Uri) -> Result<Target, String> {
        let path = uri.path();
        if !path.starts_with('/') {
            return Err("the request path must start with /".into());
        }
        check_segments(path)?;
        let name = path[1..].split('/').next().unwrap_or_default();
        Ok(Target {
            name: name.to_string(),
            path: path[1 + name.len()..].to_string(),
            query: uri.query().map(str::to_string),
        })
    }

    /// The path and query after the name, as the upstream gets them under its prefix.
    pub fn rest(&self) -> String {
        match &self.query {
            Some(query) => format!("{}?{query}", self.path),
            None => self.path.clone(),
        }
    }
}

/// `path` is `/seg/seg…`: every segment non-empty, not a dot segment, no hidden separator.
fn check_segments(path: &str) -> Result<(), String> {
    for segment in path[1..].split('/') {
        if segment.is_empty() {
            return Err("has an empty segment (`//` or a trailing `/`)".into());
        }
        let lower = segment.to_ascii_lowercase();
        if lower.contains("%2f") || lower.contains("%5c") || lower.contains('\\') {
            return Err("has an encoded `/` or a `\\` inside a segment".into());
        }
        let decoded = lower.replace("%2e", ".");
        if decoded == "." || decoded == ".." {
            return Err("has a `.` or `..` segment".into());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(text: &str) -> Result<Target, String> {
        Target::parse(&text.parse::<Uri>().map_err(|e| e.to_string())?)
    }

    #[test]
    fn plain_targets_split_into_name_path_and_query() {
        assert_eq!(
            target("/anthropic/v1/messages?beta=true").unwrap(),
            Target {
                name: "anthropic".into(),
                path: "/v1/messages".into(),
                query: Some("beta=true".into()),
            }
        );
        assert_eq!(target("/openai").unwrap().path, "");
        let base = Base::parse("https://dashscope.aliyuncs.com/compatible-mode/").unwrap();
        let uri = base
            .join(&target("/bailian/v1/chat/completions").unwrap())
            .unwrap();
        assert_eq!(
            uri.to_string(),
            "https://dashscope.aliyuncs.com/compatible-mode/v1/chat/completions"
        );
    }

    #[test]
    fn empty_dot_and_hidden_separator_segments_are_refused() {
        for bad in [
            "//anthropic/v1/messages",
            "/anthropic//v1/messages",
            "/anthropic/v1/messages/",
            "/anthropic/../openai/v1/chat/completions",
            "/anthropic/./v1/messages",
            "/anthropic/%2e%2e/openai/v1/chat/completions",
            "/anthropic/%2E./openai",
            "/anthropic/.%2e/openai",
            "/anthropic/%2e/v1",
            "/anthropic%2f..%2fopenai/v1",
            "/anthropic/v1%2F..%2F..%2Fx",
            "/anthropic/v1%5c..",
            "/",
            "*",
        ] {
            assert!(target(bad).is_err(), "{bad} was accepted");
        }
    }

    #[test]
    fn a_base_must_be_an_http_url_without_query() {
        assert!(Base::parse("https://api.anthropic.com").is_ok());
        assert!(Base::parse("http://127.0.0.1:8080/p/").is_ok());
        for bad in [
            "",
            "api.anthropic.com",
            "ftp://x",
            "https://x/p?q=1",
            "https://x/a/../b",
        ] {
            assert!(Base::parse(bad).is_err(), "{bad} was accepted");
        }
    }

    /// Property: whatever the request target, the URL that would go upstream has exactly
    /// the configured scheme, host, port and path prefix — also as the upstream reads it
    /// back off the wire — and nothing after the prefix can climb out of it; or the target
    /// is refused.
    #[test]
    fn no_request_target_bends_the_upstream_authority_or_prefix() {
        const PIECES: &[&str] = &[
            "/",
            "/",
            "/",
            ".",
            "..",
            "%2e",
            "%2E",
            "%2f",
            "%2F",
            "%5c",
            "\\",
            "@",
            ":",
            "?",
            "#",
            "a",
            "v1",
            "messages",
            "anthropic",
            "openai",
            "x8",
            "8",
            "%",
            "%25",
            "[",
            "]",
            "evil.com",
            "127.0.0.1",
            ":443",
            "http://",
            "https://",
            "//",
            "=",
            "&",
            "~",
        ];
        let bases = [
            "http://127.0.0.1:4567",
            "https://api.anthropic.com",
            "https://dashscope.aliyuncs.com/compatible-mode",
            "http://[::1]:8080/p/q",
            "http://user@localhost:9/pre",
        ];
        let mut rng = fastrand::Rng::with_seed(0x5eed_0011);
        let mut accepted = 0;
        for case in 0..4000 {
            let mut text = String::new();
            if case % 3 != 0 {
                text.push('/');
            }
            for _ in 0..rng.usize(1..10) {
                text.push_str(PIECES[rng.usize(..PIECES.len())]);
            }
            // What hyper would refuse itself never reaches the relay.
            let Ok(uri) = text.parse::<Uri>() else {
                continue;
            };
            let Ok(target) = Target::parse(&uri) else {
                continue;
            };
            accepted += 1;
            assert!(!target.name.contains('/'), "{text:?}: {target:?}");
            for base_text in bases {
                let base = Base::parse(base_text).unwrap();
                let sent = base
                    .join(&target)
                    .unwrap_or_else(|e| panic!("{text:?} on {base_text}: {e}"));
                // As built, and as the upstream parses it back.
                for uri in [sent.clone(), sent.to_string().parse::<Uri>().unwrap()] {
                    assert_eq!(uri.scheme(), Some(&base.scheme), "{text:?} -> {uri}");
                    assert_eq!(uri.authority(), Some(&base.authority), "{text:?} -> {uri}");
                    assert_eq!(
                        uri.port_u16(),
                        base.authority.port_u16(),
                        "{text:?} -> {uri}"
                    );
                    let path = uri.path();
                    let under = path
                        .strip_prefix(base.prefix.as_str())
                        .unwrap_or_else(|| panic!("{text:?} -> {uri}: prefix lost"));
                    if !under.is_empty() && under != "/" {
                        check_segments(under)
                            .unwrap_or_else(|why| panic!("{text:?} -> {uri}: {why}"));
                    }
                }
            }
        }
        assert!(
            accepted > 200,
            "too few accepted targets to mean much: {accepted}"
        );
    }
}
