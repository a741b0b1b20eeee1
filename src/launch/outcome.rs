pub enum Ended {
    Done,
    FastFail,
    Limit,
    Error,
    Signal,
    UsageError,
}
pub struct RungRun {
    pub rung: usize,
    pub cli: String,
    pub label: String,
    pub model: Option<String>,
    pub session: Option<String>,
    pub seconds: f64,
    pub code: Option<i32>,
    pub ended: Ended,
    pub window: Option<String>,
    pub reset: Option<jiff::Timestamp>,
}
pub fn record_to(_path: Option<std::path::PathBuf>) {}
pub fn rung_ran(_run: RungRun) {}
pub fn handed_off(_brief: &std::path::Path) {}
pub fn waited(_d: std::time::Duration) {}
pub fn finish(_exit: i32) {}
