//! What may differ between a page's transcript and agent's output on this run, and only
//! that: the instant (a reset's clock time, a date, an age, a latency, a countdown), and the
//! values agent makes up afresh each run (session ids, run ids, tokens, a free port).
//! Each is replaced by a placeholder of its own kind, on both sides, so a drift in its
//! shape (a date written another way) or in any word around it still shows. Paths are not
//! masked: the sandbox's are put in the page's words before this ([`super::scenes`]).

/// `line` with every value of a varying kind replaced by its kind: `<time>`, `<date>`,
/// `<instant>`, `<stamp>`, `<dur>`, `<uuid>`, `<hex>`, `<port>`, `<n>` (a JSON count of
/// seconds or milliseconds). Spaces after a placeholder are one space: a value's width
/// moves the padding after it.
pub fn mask(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::new();
    let mut at = 0;
    while at < chars.len() {
        let boundary = at == 0 || !is_word(chars[at - 1]) && chars[at - 1] != '.';
        let found = if boundary {
            recognise(&chars, at, &out)
        } else {
            None
        };
        match found {
            Some((length, kind)) => {
                out.push_str(kind);
                at += length;
                if chars.get(at) == Some(&' ') {
                    out.push(' ');
                    while chars.get(at) == Some(&' ') {
                        at += 1;
                    }
                }
            }
            None => {
                out.push(chars[at]);
                at += 1;
            }
        }
    }
    out
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The varying value that starts at `at`, as its length in chars and its placeholder.
fn recognise(chars: &[char], at: usize, before: &str) -> Option<(usize, &'static str)> {
    let rest = &chars[at..];
    let ends_word = |length: usize| rest.get(length).is_none_or(|&c| !is_word(c));
    if let Some(length) = uuid(rest).filter(|&l| ends_word(l)) {
        return Some((length, "<uuid>"));
    }
    if let Some(length) = stamp(rest).filter(|&l| ends_word(l)) {
        return Some((length, "<stamp>"));
    }
    if let Some((length, kind)) = date(rest).filter(|&(l, _)| ends_word(l)) {
        return Some((length, kind));
    }
    if let Some(length) = named_time(rest) {
        return Some((length, "<time>"));
    }
    if let Some(length) = clock(rest) {
        return Some((length, "<time>"));
    }
    if let Some(length) = duration(rest) {
        return Some((length, "<dur>"));
    }
    if let Some(length) = hex(rest).filter(|&l| ends_word(l)) {
        return Some((length, "<hex>"));
    }
    if before.ends_with("127.0.0.1:") || before.ends_with("localhost:") {
        let length = digits(rest);
        if length > 0 && ends_word(length) {
            return Some((length, "<port>"));
        }
    }
    let json_time = [
        "seconds\": ",
        "seconds\":",
        "_ms\": ",
        "_ms\":",
        "_s\": ",
        "_s\":",
    ];
    if json_time.iter().any(|key| before.ends_with(key)) {
        let length = number(rest);
        if length > 0 && ends_word(length) {
            return Some((length, "<n>"));
        }
    }
    None
}

fn digits(rest: &[char]) -> usize {
    rest.iter().take_while(|c| c.is_ascii_digit()).count()
}

/// `12` or `3.25`.
fn number(rest: &[char]) -> usize {
    let whole = digits(rest);
    if whole == 0 {
        return 0;
    }
    if rest.get(whole) == Some(&'.') {
        let fraction = digits(&rest[whole + 1..]);
        if fraction > 0 {
            return whole + 1 + fraction;
        }
    }
    whole
}

/// Exactly `n` digits at `rest`.
fn exactly(rest: &[char], n: usize) -> bool {
    rest.len() >= n && rest[..n].iter().all(char::is_ascii_digit)
}

fn is_hex(c: char) -> bool {
    c.is_ascii_digit() || ('a'..='f').contains(&c)
}

/// `5f0c1e9a-1111-4222-8333-944455556666`.
fn uuid(rest: &[char]) -> Option<usize> {
    let mut at = 0;
    for (i, group) in [8, 4, 4, 4, 12].into_iter().enumerate() {
        if i > 0 {
            (rest.get(at) == Some(&'-')).then_some(())?;
            at += 1;
        }
        (rest.len() >= at + group && rest[at..at + group].iter().all(|&c| is_hex(c)))
            .then_some(())?;
        at += group;
    }
    Some(at)
}

/// `20261202T130512Z`, as a brief's or a backup's name carries the instant.
fn stamp(rest: &[char]) -> Option<usize> {
    (exactly(rest, 8)
        && rest.get(8) == Some(&'T')
        && exactly(&rest[9..], 6)
        && rest.get(15) == Some(&'Z'))
    .then_some(16)
}

/// `2026-09-14`, or an instant `2026-12-02T15:00:00Z` (seconds, a fraction, `Z` or an
/// offset as they come).
fn date(rest: &[char]) -> Option<(usize, &'static str)> {
    let is_date = exactly(rest, 4)
        && rest.get(4) == Some(&'-')
        && exactly(&rest[5..], 2)
        && rest.get(7) == Some(&'-')
        && exactly(&rest[8..], 2);
    if !is_date {
        return None;
    }
    let mut at = 10;
    if rest.get(at) != Some(&'T') || !exactly(&rest[at + 1..], 2) {
        return Some((at, "<date>"));
    }
    at += 3;
    while rest.get(at) == Some(&':') && exactly(&rest[at + 1..], 2) {
        at += 3;
    }
    if rest.get(at) == Some(&'.') {
        at += 1 + digits(&rest[at + 1..]);
    }
    match rest.get(at) {
        Some('Z') => at += 1,
        Some('+' | '-') if exactly(&rest[at + 1..], 2) => {
            at += 3;
            if rest.get(at) == Some(&':') {
                at += 1;
            }
            at += digits(&rest[at..]).min(2);
        }
        _ => {}
    }
    Some((at, "<instant>"))
}

const DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

fn word_at(rest: &[char], word: &str) -> bool {
    let n = word.chars().count();
    rest.len() > n && rest[..n].iter().copied().eq(word.chars()) && rest[n] == ' '
}

/// A time on another day, as agent writes one: `Thu 09:00`, `Dec 12 00:00`,
/// `Wed 2 Dec 05:30`.
fn named_time(rest: &[char]) -> Option<usize> {
    let mut at = 0;
    if DAYS.iter().any(|day| word_at(rest, day)) {
        at = 4;
        let day = digits(&rest[at..]);
        if (1..=2).contains(&day) && rest.get(at + day) == Some(&' ') {
            let month = &rest[at + day + 1..];
            if MONTHS.iter().any(|m| word_at(month, m)) {
                at += day + 5;
            }
        }
    } else if MONTHS.iter().any(|month| word_at(rest, month)) {
        let day = digits(&rest[4..]);
        (1..=2).contains(&day).then_some(())?;
        (rest.get(4 + day) == Some(&' ')).then_some(())?;
        at = 5 + day;
    }
    if at == 0 {
        return None;
    }
    clock(&rest[at..]).map(|length| at + length)
}

/// A clock time: `15:00`, `9:05:59`, a countdown's `41:12`, Claude Code's `3:04pm`.
fn clock(rest: &[char]) -> Option<usize> {
    let hours = digits(rest);
    ((1..=2).contains(&hours) && rest.get(hours) == Some(&':')).then_some(())?;
    let mut at = hours;
    while rest.get(at) == Some(&':') && exactly(&rest[at + 1..], 2) {
        at += 3;
    }
    (at > hours).then_some(())?;
    if rest.get(at).is_some_and(char::is_ascii_digit) {
        return None;
    }
    for suffix in ["am", "pm", " AM", " PM"] {
        let n = suffix.len();
        if rest.len() >= at + n && rest[at..at + n].iter().copied().eq(suffix.chars()) {
            at += n;
            break;
        }
    }
    Some(at)
}

/// A length of time as agent says one: `412 ms`, `3.1 s`, `0s`, `42 min`, `3 h 12 min`,
/// `2 d 3 h`, `1 min 10 s` — a number and a unit, and any more that follow.
fn duration(rest: &[char]) -> Option<usize> {
    let mut at = one_length(rest)?;
    while rest.get(at) == Some(&' ') {
        match one_length(&rest[at + 1..]) {
            Some(more) => at += 1 + more,
            None => break,
        }
    }
    Some(at)
}

fn one_length(rest: &[char]) -> Option<usize> {
    let n = number(rest);
    (n > 0).then_some(())?;
    let spaced = rest.get(n) == Some(&' ');
    let from = n + usize::from(spaced);
    let units: &[&str] = if spaced {
        &["ms", "min", "s", "h", "d"]
    } else {
        &["ms", "s"]
    };
    units.iter().find_map(|unit| {
        let length = unit.len();
        let fits = rest.len() >= from + length
            && rest[from..from + length].iter().copied().eq(unit.chars())
            && rest
                .get(from + length)
                .is_none_or(|&c| !c.is_alphanumeric());
        fits.then_some(from + length)
    })
}

/// A run of at least 12 lower-case hex digits with a letter and a digit in it: a run id, a
/// token, a hash.
fn hex(rest: &[char]) -> Option<usize> {
    let length = rest.iter().take_while(|&&c| is_hex(c)).count();
    let run = &rest[..length];
    (length >= 12
        && run.iter().any(char::is_ascii_digit)
        && run.iter().any(char::is_ascii_alphabetic))
    .then_some(length)
}

/// Whether the `printed` lines of a page's transcript are `actual`, after [`mask`]: line by
/// line, where a page's line that is `…` alone stands for one or more lines left out, and a
/// line ending in `…` for a line that begins with what it shows. `Err` says the first line
/// that differs.
pub fn matches(printed: &[String], actual: &[String]) -> Result<(), String> {
    let printed: Vec<String> = printed.iter().map(|line| mask(line)).collect();
    let actual: Vec<String> = actual.iter().map(|line| mask(line)).collect();
    if fits(&printed, &actual) {
        return Ok(());
    }
    // The first page line that no order of the elisions lets through, for the message.
    let mut shown = 0;
    for line in &printed {
        if line == "…" {
            continue;
        }
        let found = actual.iter().any(|real| same_line(line, real));
        if !found {
            return Err(format!("the page says {line:?}, which agent did not print"));
        }
        shown += 1;
    }
    Err(format!(
        "agent printed {} lines where the page shows {shown} (and {} elisions) in another order or with more lines",
        actual.len(),
        printed.iter().filter(|line| *line == "…").count()
    ))
}

fn same_line(page: &str, real: &str) -> bool {
    page == real
        || page
            .strip_suffix('…')
            .is_some_and(|start| !start.trim().is_empty() && real.starts_with(start))
}

fn fits(page: &[String], real: &[String]) -> bool {
    match page.split_first() {
        None => real.is_empty(),
        Some((first, rest)) if first == "…" => {
            (1..=real.len()).any(|skipped| fits(rest, &real[skipped..]))
        }
        Some((first, rest)) => real
            .split_first()
            .is_some_and(|(line, after)| same_line(first, line) && fits(rest, after)),
    }
}
