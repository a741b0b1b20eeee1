//! Headless Chromium driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`:
//! commands in on fd 3, answers out on fd 4, each a JSON message ended by a NUL), so a test
//! can ask a page what a person would see — its text, a computed colour, a box's height —
//! without a websocket client. The page's own policy does not apply to what DevTools
//! evaluates, so the page needs no hook for it.

use std::io::{BufRead as _, BufReader, Write as _};
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub struct Browser {
    child: Child,
    to: ChildStdin,
    from: BufReader<ChildStdout>,
    next_id: u64,
    session: String,
}

impl Browser {
    /// Chromium with `profile` as its user data directory, one tab open at `url`, loaded.
    pub fn open(profile: &Path, url: &str, width: u32, height: u32) -> Browser {
        let binary = if Path::new("/usr/bin/chromium").exists() {
            "/usr/bin/chromium"
        } else {
            "chromium"
        };
        // The shell hands Chromium the pipe on the descriptors it reads and writes. Chromium
        // only draws what the dashboard rendered (on the test's clock): it runs on the
        // machine's, as libfaketime slows its many timer threads to a crawl.
        let mut command = Command::new("sh");
        crate::support::clock::without_faked_clock(&mut command);
        let mut child = command
            .args([
                "-c",
                "exec \"$@\" 3<&0 4>&1 0</dev/null 1>/dev/null",
                "sh",
                binary,
                "--headless",
                "--remote-debugging-pipe",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-dev-shm-usage",
                "--disable-features=NetworkTimeServiceQuerying,OptimizationHints,MediaRouter,Translate,AutofillServerCommunication",
                "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
                &format!("--window-size={width},{height}"),
                &format!("--user-data-dir={}", profile.display()),
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("run chromium (Debian's package `chromium`; .ci/run installs it)");
        let to = child.stdin.take().unwrap();
        let from = BufReader::new(child.stdout.take().unwrap());
        let mut browser = Browser {
            child,
            to,
            from,
            next_id: 0,
            session: String::new(),
        };
        let target = browser.call("Target.createTarget", &json!({"url": "about:blank"}));
        let attached = browser.call(
            "Target.attachToTarget",
            &json!({"targetId": target["targetId"], "flatten": true}),
        );
        browser.session = attached["sessionId"].as_str().unwrap().to_string();
        browser.call(
            "Emulation.setDeviceMetricsOverride",
            &json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}),
        );
        browser.call("Page.navigate", &json!({"url": url}));
        super::wait::until("the page loaded", || {
            browser.eval("location.href !== 'about:blank' && document.readyState") == "complete"
                && browser.eval("!!document.querySelector('h1')") == true
        });
        browser
    }

    fn call(&mut self, method: &str, params: &Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({"id": id, "method": method, "params": params});
        if !self.session.is_empty() {
            message["sessionId"] = json!(self.session);
        }
        let mut bytes = message.to_string().into_bytes();
        bytes.push(0);
        self.to.write_all(&bytes).expect("write to chromium");
        self.to.flush().unwrap();
        loop {
            let mut answer = Vec::new();
            let read = self.from.read_until(0, &mut answer).expect("read chromium");
            assert!(read > 0, "chromium closed its pipe during {method}");
            answer.pop();
            let answer: Value = serde_json::from_slice(&answer).expect("chromium's JSON");
            if answer["id"] == id {
                assert!(answer.get("error").is_none(), "{method}: {answer}");
                return answer["result"].clone();
            }
        }
    }

    /// The value of `expression` in the page.
    pub fn eval(&mut self, expression: &str) -> Value {
        let result = self.call(
            "Runtime.evaluate",
            &json!({"expression": expression, "returnByValue": true}),
        );
        assert!(
            result.get("exceptionDetails").is_none(),
            "{expression}: {result}"
        );
        result["result"]["value"].clone()
    }

    /// The whole page as a PNG at `path`, `width` wide and as tall as its content.
    pub fn screenshot(&mut self, path: &Path, width: u32) {
        let height = self
            .eval("document.documentElement.scrollHeight")
            .as_u64()
            .unwrap();
        self.call(
            "Emulation.setDeviceMetricsOverride",
            &json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}),
        );
        let shot = self.call("Page.captureScreenshot", &json!({"format": "png"}));
        let data = shot["data"].as_str().unwrap();
        let url_safe: String = data
            .chars()
            .filter(|c| *c != '=')
            .map(|c| match c {
                '+' => '-',
                '/' => '_',
                c => c,
            })
            .collect();
        let png = agent::login::jwt::base64url_decode(&url_safe).expect("base64 PNG");
        std::fs::write(path, png).unwrap();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        super::sandbox::kill_group(self.child.id());
        let _ = self.child.wait();
    }
}
