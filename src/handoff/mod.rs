pub struct Source<'a> {
    pub label: &'a str,
    pub cli: &'a str,
    pub model: Option<&'a str>,
    pub session: Option<&'a str>,
    pub limit: &'a str,
}
pub fn write(
    _state_dir: &std::path::Path,
    _cwd: &std::path::Path,
    _source: &Source,
    _session: &crate::login::session::Session,
    _now: jiff::Timestamp,
) -> anyhow::Result<std::path::PathBuf> {
    anyhow::bail!("temp")
}
