//! What a CLI reads to find the API it calls: the wire API it speaks, the variables it takes
//! its key from (each with how the key travels), where it takes an OpenAI-style endpoint
//! from, and whether it falls back to its own login store. Each CLI's file answers for
//! itself ([`super::Family::endpoint_defaults`]); `backend::endpoint::resolve` puts the
//! answer together with agent's configuration and the row's account. Leaf types only: the
//! adapter sits below the backend floor, which maps them to its own.

/// The wire format a CLI speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireApi {
    Anthropic,
    /// OpenAI-style, in one of its forms; `None`: the form agent's configuration names
    /// (`probe.api`).
    OpenAi(Option<OpenAiForm>),
    Gemini,
}

impl WireApi {
    /// The same API, whatever its form.
    pub fn same_api(self, other: WireApi) -> bool {
        std::mem::discriminant(&self) == std::mem::discriminant(&other)
    }
}

/// The two forms of OpenAI's API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenAiForm {
    Chat,
    Responses,
}

/// How a key travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// `x-api-key: KEY`
    XApiKey,
    /// `Authorization: Bearer KEY`
    Bearer,
    /// A subscription token: bearer, with its OAuth beta header.
    OAuth,
    /// `x-goog-api-key: KEY`
    GoogApiKey,
}

/// A variable a CLI reads its key from, and how it sends what it finds there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyVar {
    pub name: String,
    pub scheme: Scheme,
}

impl KeyVar {
    pub fn new(name: &str, scheme: Scheme) -> KeyVar {
        KeyVar {
            name: name.to_string(),
            scheme,
        }
    }
}

/// A custom provider a CLI's own settings send it to (Codex's `model_provider`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provider {
    pub name: String,
    pub base_url: String,
    /// The variable it reads the provider's key from.
    pub env_key: Option<String>,
    /// The form of OpenAI's API the provider speaks, when its settings say.
    pub wire_api: Option<OpenAiForm>,
    /// Whether the CLI sends this provider the login in its home (a gateway in front of
    /// the vendor's own backend): its calls are that login's, judged by its windows.
    pub runs_on_login: bool,
}

/// Where a CLI takes an OpenAI-style endpoint from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpenAiBase {
    /// `OPENAI_BASE_URL`, else OpenAI's own API, with its key (it has no login to fall
    /// back on there).
    Variable,
    /// Its own settings, whatever `OPENAI_BASE_URL` says: the custom provider they name
    /// (its base URL, key variable and wire API), else OpenAI's own API (Codex).
    Settings(Option<Provider>),
}

/// What a CLI reads, in its environment, to call its API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointDefaults {
    /// The API it calls.
    pub api: WireApi,
    /// The variables it reads that API's key from, the first one set being the one it sends.
    pub key_vars: Vec<KeyVar>,
    /// Where it takes an OpenAI-style endpoint from.
    pub openai_base: OpenAiBase,
    /// Whether, given no key, it uses its own login store on this API.
    pub own_login: bool,
}

impl EndpointDefaults {
    /// An OpenAI-style CLI agent knows no more of: `OPENAI_BASE_URL` and `OPENAI_API_KEY`,
    /// in the form the configuration names, and no login of its own.
    pub fn openai_style() -> EndpointDefaults {
        EndpointDefaults {
            api: WireApi::OpenAi(None),
            key_vars: vec![KeyVar::new("OPENAI_API_KEY", Scheme::Bearer)],
            openai_base: OpenAiBase::Variable,
            own_login: false,
        }
    }

    /// The same CLI told to call `configured` (a probe of a kind): on its own API as it
    /// is, on another as that API's own CLI reads it — the variables Claude Code reads
    /// for Anthropic's, Gemini CLI's for Google's — without a login store of its own.
    #[must_use]
    pub fn on(
        self,
        configured: Option<WireApi>,
        standard: impl FnOnce(WireApi) -> EndpointDefaults,
    ) -> EndpointDefaults {
        let Some(api) = configured else {
            return self;
        };
        if api.same_api(self.api) {
            return EndpointDefaults { api, ..self };
        }
        let standard = standard(api);
        EndpointDefaults {
            api,
            key_vars: standard.key_vars,
            openai_base: self.openai_base,
            own_login: false,
        }
    }
}
