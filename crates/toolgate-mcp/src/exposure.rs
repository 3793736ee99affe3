//! How the gateway's tools appear to an MCP client: [`Exposure`].

use std::fmt;
use std::str::FromStr;

/// Which MCP tools a session sees.
///
/// Parsed from the CLI spelling with [`FromStr`]: `meta`, `direct`,
/// `scoped:nutrition,body`. Configuration files use the same spelling (serde
/// goes through [`FromStr`] and [`fmt::Display`]), so a bad value is refused
/// when the file is read, with the spellings that work.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Exposure {
    /// The three meta-tools (`get_skill_guide`, `get_tool_schema`,
    /// `execute_tool`); the catalog in the server instructions names the rest.
    #[default]
    Meta,
    /// Every tool the caller may use, each as its own MCP tool with annotations.
    Direct,
    /// Like [`Exposure::Direct`], limited to the tools of these domains: the
    /// session's caller gets `domains` set, so the gateway also refuses
    /// calls outside them.
    Scoped(Vec<String>),
}

impl Exposure {
    /// Whether tools are exposed one by one (direct or scoped).
    pub fn is_direct(&self) -> bool {
        !matches!(self, Exposure::Meta)
    }

    /// The domains a scoped exposure is limited to.
    pub fn domains(&self) -> Option<&[String]> {
        match self {
            Exposure::Scoped(domains) => Some(domains),
            _ => None,
        }
    }
}

/// Narrow a caller to `domains`: the caller keeps only the domains it
/// already had (from its key) that are also in `domains`; a caller without
/// domains gets `domains`. Scopes only ever narrow: nothing here widens.
pub(crate) fn narrow(caller: &mut toolgate_core::Caller, domains: &[String]) {
    let narrowed = match caller.domains.take() {
        Some(own) => own.into_iter().filter(|d| domains.contains(d)).collect(),
        None => domains.to_vec(),
    };
    caller.domains = Some(narrowed);
}

/// The domains a client asked for with `?domains=a,b` on the MCP URL.
pub(crate) fn session_domains(query: Option<&str>) -> Option<Vec<String>> {
    let value = query?.split('&').find_map(|pair| pair.strip_prefix("domains="))?;
    // Domain names are plain words; only the comma may come percent-encoded.
    let value = value.replace("%2C", ",").replace("%2c", ",");
    Some(value.split(',').map(str::trim).filter(|d| !d.is_empty()).map(str::to_owned).collect())
}

/// Why an exposure spelling was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown exposure `{0}`: use `meta`, `direct` or `scoped:<domain>[,<domain>...]`")]
pub struct ParseExposureError(String);

impl FromStr for Exposure {
    type Err = ParseExposureError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        match s {
            "meta" => Ok(Exposure::Meta),
            "direct" => Ok(Exposure::Direct),
            _ => {
                let Some(list) = s.strip_prefix("scoped:") else {
                    return Err(ParseExposureError(s.to_owned()));
                };
                let domains: Vec<String> =
                    list.split(',').map(str::trim).filter(|d| !d.is_empty()).map(str::to_owned).collect();
                if domains.is_empty() {
                    return Err(ParseExposureError(s.to_owned()));
                }
                Ok(Exposure::Scoped(domains))
            }
        }
    }
}

impl TryFrom<String> for Exposure {
    type Error = ParseExposureError;

    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<Exposure> for String {
    fn from(exposure: Exposure) -> Self {
        exposure.to_string()
    }
}

impl fmt::Display for Exposure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Exposure::Meta => f.write_str("meta"),
            Exposure::Direct => f.write_str("direct"),
            Exposure::Scoped(domains) => write!(f, "scoped:{}", domains.join(",")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_only_narrow() {
        let mut keyed = toolgate_core::Caller::new("u", "member").with_domains(["nutrition", "travel"]);
        narrow(&mut keyed, &["nutrition".into(), "body".into()]);
        assert_eq!(keyed.domains, Some(vec!["nutrition".to_owned()]));
        let mut open = toolgate_core::Caller::new("u", "member");
        narrow(&mut open, &["body".into()]);
        assert_eq!(open.domains, Some(vec!["body".to_owned()]));
        assert_eq!(
            session_domains(Some("a=1&domains=nutrition%2Cbody")),
            Some(vec!["nutrition".into(), "body".into()])
        );
        assert_eq!(session_domains(Some("x=1")), None);
    }

    #[test]
    fn parses_and_prints_every_spelling() {
        for (text, expected) in [
            ("meta", Exposure::Meta),
            ("direct", Exposure::Direct),
            ("scoped:nutrition", Exposure::Scoped(vec!["nutrition".into()])),
            ("scoped:nutrition, body", Exposure::Scoped(vec!["nutrition".into(), "body".into()])),
        ] {
            let parsed: Exposure = text.parse().unwrap();
            assert_eq!(parsed, expected);
            assert_eq!(parsed.to_string().parse::<Exposure>().unwrap(), expected);
        }
        for bad in ["", "scoped:", "scoped: , ", "Meta", "scope:x"] {
            assert!(bad.parse::<Exposure>().is_err(), "{bad} was accepted");
        }
        let scoped = Exposure::Scoped(vec!["nutrition".into(), "body".into()]);
        let json = serde_json::to_value(&scoped).unwrap();
        assert_eq!(json, "scoped:nutrition,body");
        assert_eq!(serde_json::from_value::<Exposure>(json).unwrap(), scoped);
        let err = serde_json::from_value::<Exposure>("scope:x".into()).unwrap_err().to_string();
        assert!(err.contains("scope:x") && err.contains("scoped:<domain>"), "{err}");
    }
}
