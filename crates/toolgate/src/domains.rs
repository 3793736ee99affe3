//! `[[domains]]`: HTTP systems declared in configuration, each a base URL, a folder of
//! route-table files and an auth kind. Every table is checked as the compiled ones are; a
//! broken configuration is refused with every problem (file, line, field, fix) at once. The
//! compiled-in fitness domain is loaded through the same [`Declared`] path.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use toolgate_core::{Secret, Tool, ToolSpec};
use toolgate_http::{Auth, HttpExecutor, HttpOptions};
use toolgate_schema::RouteTable;

/// One `[[domains]]` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DomainConfig {
    /// The domain of every tool of this system: what key scopes (`--domains`), toolsets,
    /// `--expose scoped:`, `/mcp?domains=`, the catalog and `metadata.domain` select. A
    /// table's own `domain` field is kept only as a tag (an importer's per-tag grouping), so
    /// one name scopes the whole system however its tables were written. Messages say
    /// "the NAME API".
    pub name: String,
    /// `https://host[:port][/prefix]`.
    pub base_url: String,
    /// A folder of route-table files (`*.toml`, `*.json`); a relative path is taken from the
    /// configuration file's folder.
    pub routes: PathBuf,
    /// How requests authenticate.
    #[serde(default)]
    pub auth: AuthConfig,
    /// The credential of each security scheme that some routes name as theirs (a route's
    /// `security`, from an OpenAPI operation's own): e.g. `schemes = { api_key = { kind =
    /// "static", header = "api_key", env = "PETSTORE_API_KEY_CREDENTIAL" } }`. A route sends the
    /// first of its schemes listed here, else `auth`.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub schemes: std::collections::BTreeMap<String, AuthConfig>,
    /// The servers routes name as their own (a route's `server`, from an OpenAPI operation's
    /// own `servers`, e.g. Box's upload host), each mapped to the base URL called for it
    /// (itself, or a staging or test host). A route whose server is not listed here is
    /// refused at load: the domain's credential goes only to the hosts this file names.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub servers: std::collections::BTreeMap<String, String>,
    /// Time limit of one request, in milliseconds.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
    /// Largest file (image, PDF, ...) an answer may carry, in bytes; a larger one is an
    /// `EXECUTION_ERROR` naming its size and this limit.
    #[serde(default = "default_max_binary_bytes")]
    pub max_binary_bytes: usize,
    /// Largest upload of one multipart request (its files together, decoded from the base64
    /// text the model gives), in bytes; more is `INVALID_PARAMS` and nothing is sent.
    #[serde(default = "default_max_upload_bytes")]
    pub max_upload_bytes: usize,
}

fn default_timeout_ms() -> u64 {
    10_000
}

fn default_max_binary_bytes() -> usize {
    HttpOptions::default().max_binary_bytes
}

fn default_max_upload_bytes() -> usize {
    HttpOptions::default().max_upload_bytes
}

/// `auth = { kind = ... }`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum AuthConfig {
    /// The caller's credential made for this domain (filed under its name) as
    /// `Authorization: Bearer`; a caller without one is refused before any I/O. A credential
    /// made for another backend (the fitness API's token) is never sent.
    #[default]
    BearerFromCaller,
    /// One credential from the environment variable `env`, sent in `header`.
    Static {
        /// The header, e.g. `X-Api-Key`.
        header: String,
        /// The environment variable holding the value (never the value itself).
        env: String,
    },
    /// No credentials.
    None,
    /// The caller's sign-in (an `[auth.oauth]` access token) exchanged for a token with this
    /// backend's audience (RFC 8693), per user, cached; an API-key caller has none to
    /// exchange and is refused before any I/O. The caller's own token is never sent.
    TokenExchange(crate::config::TokenExchangeSection),
    /// One service token for every caller, from the client-credentials grant, cached.
    ClientCredentials(crate::config::ClientCredentialsSection),
}

/// A route-table file's name (as shown in messages) and text.
#[derive(Debug, Clone)]
pub struct RouteFile {
    /// Where it came from, e.g. `routes/crm/query_contacts.toml`.
    pub name: String,
    /// The TOML or JSON text.
    pub text: String,
}

/// A domain ready to become tools: its tables checked, its options (auth, TLS) resolved.
#[derive(Debug)]
pub struct Declared {
    /// The system's name (a tag of every tool, and "the NAME API" in messages).
    pub name: String,
    /// The domain every tool gets, replacing its table's: the declared name for a
    /// `[[domains]]` entry. `None` keeps the tables' own, for the compiled-in fitness system
    /// whose shipped tables span three domains (nutrition, body, training) that existing
    /// keys and toolsets select.
    pub domain: Option<String>,
    /// The base URL.
    pub base_url: String,
    /// The tables.
    pub tables: Vec<RouteTable>,
    /// Auth, TLS roots, timeout.
    pub options: HttpOptions,
}

impl Declared {
    /// Why every call of this domain will be refused, when that is known before serving:
    /// `bearer_from_caller` sends only a credential made for this domain, and toolgate issues
    /// per-user credentials for the compiled-in fitness API alone.
    pub fn credential_gap(&self) -> Option<String> {
        matches!(self.options.auth, Auth::BearerFromCaller).then(|| {
            format!(
                "domain `{}`: auth is bearer_from_caller, but no credential is issued for `{}` (the fitness API's token is sent to the fitness API only), so every call is refused with PERMISSION_DENIED until one is: set `auth = {{ kind = \"static\", header = ..., env = ... }}` or `{{ kind = \"none\" }}`",
                self.name, self.name
            )
        })
    }

    /// The tools, one per table, sharing one connection pool; `decorate` may add examples.
    pub fn tools(&self, decorate: impl Fn(ToolSpec) -> ToolSpec) -> Result<Vec<Arc<dyn Tool>>, String> {
        let executor = Arc::new(
            HttpExecutor::new(&self.base_url, self.options.clone())
                .map_err(|e| format!("domain `{}`: {e}", self.name))?,
        );
        self.tables
            .iter()
            .map(|table| {
                let tool =
                    executor.tool(table.clone()).map_err(|e| format!("domain `{}`: {e}", self.name))?;
                let name = self.name.clone();
                let domain = self.domain.clone();
                let tool = tool.map_spec(|spec| {
                    let mut spec = decorate(spec);
                    if let Some(domain) = domain {
                        let own = std::mem::replace(&mut spec.domain, domain);
                        if !spec.tags.contains(&own) {
                            spec.tags.push(own);
                        }
                    }
                    if !spec.tags.contains(&name) {
                        spec.tags.push(name);
                    }
                    spec
                });
                Ok(Arc::new(tool) as Arc<dyn Tool>)
            })
            .collect()
    }
}

/// Read every `*.toml` / `*.json` file of a folder, sorted by name.
pub fn read_dir(dir: &Path) -> Result<Vec<RouteFile>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        format!(
            "{}: cannot read the routes folder ({e}). Fix: point `routes` at a folder of route-table files",
            dir.display()
        )
    })?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml" || x == "json"))
        .collect();
    paths.sort();
    if paths.is_empty() {
        return Err(format!("{}: no route tables (*.toml, *.json) in this folder", dir.display()));
    }
    paths
        .into_iter()
        .map(|p| {
            let text =
                std::fs::read_to_string(&p).map_err(|e| format!("{}: cannot read ({e})", p.display()))?;
            Ok(RouteFile { name: p.display().to_string(), text })
        })
        .collect()
}

/// Parse and check every file; on failure, one line per problem of every broken file.
pub fn load_tables(files: &[RouteFile]) -> Result<Vec<RouteTable>, Vec<String>> {
    let mut tables = Vec::new();
    let mut problems = Vec::new();
    for file in files {
        let parsed = if file.name.ends_with(".json") {
            RouteTable::from_json_str(&file.text)
        } else {
            RouteTable::from_toml_str(&file.text)
        };
        match parsed {
            Ok(table) => tables.push(table),
            Err(e) => problems.extend(describe(file, &e)),
        }
    }
    if problems.is_empty() { Ok(tables) } else { Err(problems) }
}

/// `file:line: problem` lines for one broken file.
fn describe(file: &RouteFile, error: &toolgate_schema::Error) -> Vec<String> {
    match error {
        toolgate_schema::Error::Invalid { problems, .. } => {
            problems.iter().map(|p| format!("{}:{}: {p}", file.name, line_of(&file.text, p))).collect()
        }
        toolgate_schema::Error::Parse { message, .. } => {
            // The TOML parser's message holds the line and a caret drawing; keep it on one line.
            let line = message
                .split_once("line ")
                .and_then(|(_, rest)| rest.split(|c: char| !c.is_ascii_digit()).next())
                .unwrap_or("1");
            let text = message.lines().rfind(|l| !l.trim().is_empty() && !l.contains('|')).unwrap_or(message);
            vec![format!(
                "{}:{line}: {} (the table format is that of crates/toolgate-fitness/routes/*.toml: tool, description, domain, [[routes]] with op, method, path, summary, [[routes.fields]])",
                file.name,
                text.trim()
            )]
        }
        other => vec![format!(
            "{}:{}: {}",
            file.name,
            line_of(&file.text, &other.to_string()),
            other.to_string().replace('\n', " ")
        )],
    }
}

/// The line a problem is about: the `[[routes]]` entry it names (`routes[3]`), the field
/// inside it (`field \`x\``), or a top-level key; 1 when nothing better is known.
fn line_of(text: &str, problem: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    let find_from = |start: usize, pred: &dyn Fn(&str) -> bool| {
        (start..lines.len()).find(|&i| pred(lines[i].trim())).map(|i| i + 1)
    };
    let route_line = problem
        .strip_prefix("routes[")
        .and_then(|r| r.split(']').next())
        .and_then(|n| n.parse::<usize>().ok())
        .and_then(|n| {
            let starts: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].trim() == "[[routes]]").collect();
            starts.get(n).map(|i| i + 1)
        });
    let quoted = |key: &str| {
        problem
            .split_once(&format!("{key} `"))
            .and_then(|(_, rest)| rest.split('`').next())
            .map(str::to_owned)
    };
    if let Some(start) = route_line {
        if let Some(field) = quoted("field") {
            let want = format!("name = \"{field}\"");
            if let Some(line) = find_from(start, &|l| l.replace(' ', "") == want.replace(' ', "")) {
                return line;
            }
        }
        return start;
    }
    for key in ["tool", "description", "domain", "required_role", "routes", "result_template"] {
        if problem.starts_with(&format!("`{key}"))
            && let Some(line) = find_from(0, &|l| l.starts_with(key))
        {
            return line;
        }
    }
    1
}

/// Resolve an auth kind: a static credential (and a client secret) is read from the
/// environment through `var`; a minted token's source uses `ca_bundle_pem` to reach the
/// identity provider.
pub fn resolve_auth(
    domain: &str,
    auth: &AuthConfig,
    ca_bundle_pem: Option<&str>,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<Auth, String> {
    let minted = |grant: crate::config::GrantSection| -> Result<Auth, String> {
        let client =
            crate::config::idp_client(ca_bundle_pem).map_err(|e| format!("domain `{domain}`: {e:#}"))?;
        let source = grant.source(domain, client, var).map_err(|e| format!("domain `{domain}`: {e:#}"))?;
        Ok(Auth::Token(toolgate_http::TokenProvider::new(source)))
    };
    Ok(match auth {
        AuthConfig::TokenExchange(s) => minted(crate::config::GrantSection::TokenExchange(s.clone()))?,
        AuthConfig::ClientCredentials(s) => {
            minted(crate::config::GrantSection::ClientCredentials(s.clone()))?
        }
        AuthConfig::BearerFromCaller => Auth::BearerFromCaller,
        AuthConfig::None => Auth::None,
        AuthConfig::Static { header, env } => match var(env).filter(|v| !v.trim().is_empty()) {
            Some(value) => Auth::Static { header: header.clone(), value: Secret::new(value.trim()) },
            None => {
                return Err(format!(
                    "domain `{domain}`: auth is static but the environment variable `{env}` is not set. Fix: export {env}=<the credential> before starting (credentials are never read from the file)"
                ));
            }
        },
    })
}

/// Check and prepare every declared domain; the error lists every problem of every domain.
pub fn prepare(
    domains: &[DomainConfig],
    ca_bundle_pem: Option<&str>,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Declared>, Vec<String>> {
    let mut out = Vec::new();
    let mut problems = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    for d in domains {
        if names.contains(&d.name.as_str()) {
            problems.push(format!("[[domains]] `{}` is declared twice; names must be unique", d.name));
        }
        names.push(&d.name);
        if d.name == toolgate_fitness::BACKEND_ID {
            problems.push(format!(
                "[[domains]] name `{}` is the compiled-in fitness API's, whose callers' credentials are filed under it; pick another name",
                d.name
            ));
        }
        if !toolgate_core::names::is_namespace(&d.name) {
            problems.push(format!(
                "[[domains]] name `{}` must be lowercase letters, digits and single underscores, starting with a letter (at most 32): it is the domain keys and toolsets select",
                d.name
            ));
        }
        if d.timeout_ms == 0 {
            problems.push(format!("domain `{}`: timeout_ms must be above 0", d.name));
        }
        if d.max_binary_bytes == 0 {
            problems.push(format!(
                "domain `{}`: max_binary_bytes must be above 0 (leave it out for 1 MiB)",
                d.name
            ));
        }
        if d.max_upload_bytes == 0 {
            problems.push(format!(
                "domain `{}`: max_upload_bytes must be above 0 (leave it out for 1 MiB)",
                d.name
            ));
        }
        let auth = resolve_auth(&d.name, &d.auth, ca_bundle_pem, var).map_err(|p| problems.push(p)).ok();
        let mut schemes = Vec::new();
        for (scheme, config) in &d.schemes {
            let domain = format!("{}` scheme `{scheme}", d.name);
            match resolve_auth(&domain, config, ca_bundle_pem, var) {
                Ok(auth) => schemes.push((scheme.clone(), auth)),
                Err(p) => problems.push(p),
            }
        }
        let tables = read_dir(&d.routes)
            .map_err(|p| problems.push(format!("domain `{}`: {p}", d.name)))
            .ok()
            .and_then(|files| load_tables(&files).map_err(|p| problems.extend(p)).ok());
        if let (Some(auth), Some(tables)) = (auth, tables) {
            let mut options = HttpOptions::default()
                .timeout(Duration::from_millis(d.timeout_ms))
                .max_binary_bytes(d.max_binary_bytes)
                .max_upload_bytes(d.max_upload_bytes)
                .backend_name(format!("the {} API", d.name))
                .backend_id(d.name.clone())
                .auth(auth);
            for (scheme, auth) in schemes {
                options = options.scheme(scheme, auth);
            }
            for (server, base_url) in &d.servers {
                options = options.server(server.clone(), base_url.clone());
            }
            if let Some(pem) = ca_bundle_pem {
                options = options.ca_bundle_pem(pem);
            }
            let declared = Declared {
                name: d.name.clone(),
                domain: Some(d.name.clone()),
                base_url: d.base_url.clone(),
                tables,
                options,
            };
            // Build once now, so a bad base URL or header is found before serving.
            match declared.tools(|s| s) {
                Ok(_) => out.push(declared),
                Err(p) => problems.push(p),
            }
        }
    }
    let mut tools: Vec<(&str, &str)> = Vec::new();
    for d in &out {
        for t in &d.tables {
            if let Some((_, other)) = tools.iter().find(|(tool, _)| *tool == t.tool) {
                problems.push(format!(
                    "tool `{}` is declared by domain `{}` and by domain `{other}`; rename one (tool names are global)",
                    t.tool, d.name
                ));
            }
            tools.push((&t.tool, &d.name));
        }
    }
    if problems.is_empty() { Ok(out) } else { Err(problems) }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "tool = \"query_things\"\ndescription = \"Read things.\"\ndomain = \"things\"\n\n[[routes]]\nop = \"get_thing\"\nmethod = \"GET\"\npath = \"/things/{id}\"\nsummary = \"One thing\"\n";

    #[test]
    fn every_broken_file_is_named_with_its_line_and_the_fix() {
        let bad_field = "tool = \"query_stuff\"\ndescription = \"d\"\ndomain = \"s\"\n\n[[routes]]\nop = \"get_stuff\"\nmethod = \"GET\"\npath = \"/s\"\nsummary = \"s\"\n\n[[routes.fields]]\nname = \"limit\"\ntype = \"string\"\nminimum = 1\n";
        let bad_toml = "tool = \"query_x\"\ndescription = \n";
        let files = [
            RouteFile { name: "r/good.toml".into(), text: GOOD.into() },
            RouteFile { name: "r/field.toml".into(), text: bad_field.into() },
            RouteFile { name: "r/syntax.toml".into(), text: bad_toml.into() },
        ];
        let problems = load_tables(&files).unwrap_err();
        assert_eq!(problems.len(), 2, "{problems:#?}");
        assert!(
            problems[0].starts_with("r/field.toml:12: ") && problems[0].contains("`limit`"),
            "{}",
            problems[0]
        );
        assert!(problems[0].contains("numbers only"), "{}", problems[0]);
        assert!(problems[1].starts_with("r/syntax.toml:2: "), "{}", problems[1]);
    }

    #[test]
    fn the_declared_name_is_the_domain_of_every_tool_and_must_be_a_namespace() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("query_things.toml"), GOOD).unwrap();
        let entry = |name: &str| DomainConfig {
            name: name.into(),
            base_url: "http://127.0.0.1:9".into(),
            routes: dir.path().to_owned(),
            auth: AuthConfig::None,
            schemes: Default::default(),
            servers: Default::default(),
            timeout_ms: 1000,
            max_binary_bytes: 1024,
            max_upload_bytes: 1024,
        };
        let declared = prepare(&[entry("crm")], None, &|_| None).unwrap();
        let tools = declared[0].tools(|s| s).unwrap();
        let spec = tools[0].spec();
        assert_eq!(spec.domain, "crm", "scopes and toolsets select the declared name");
        assert!(
            spec.tags.contains(&"things".to_owned()),
            "the table's own domain stays a tag: {:?}",
            spec.tags
        );

        let problems = prepare(&[entry("Bad Name")], None, &|_| None).unwrap_err();
        assert!(problems.iter().any(|p| p.contains("`Bad Name` must be lowercase")), "{problems:?}");

        // The fitness API's credentials are filed under `fitness`: no declared system may take it.
        let problems = prepare(&[entry("fitness")], None, &|_| None).unwrap_err();
        assert!(
            problems.iter().any(|p| p.contains("`fitness` is the compiled-in fitness API's")),
            "{problems:?}"
        );
    }

    #[test]
    fn a_declared_domain_sends_only_its_own_credential_and_check_says_when_none_is_issued() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("query_things.toml"), GOOD).unwrap();
        let entry = |auth: AuthConfig| DomainConfig {
            name: "crm".into(),
            base_url: "http://127.0.0.1:9".into(),
            routes: dir.path().to_owned(),
            auth,
            schemes: Default::default(),
            servers: Default::default(),
            timeout_ms: 1000,
            max_binary_bytes: 1024,
            max_upload_bytes: 1024,
        };
        let bearer = prepare(&[entry(AuthConfig::BearerFromCaller)], None, &|_| None).unwrap();
        assert_eq!(bearer[0].options.backend_id, "crm", "its callers' credentials for `crm` only");
        assert_eq!(bearer[0].options.max_binary_bytes, 1024, "the entry's file limit");
        let mut none = entry(AuthConfig::None);
        none.max_binary_bytes = 0;
        let problems = prepare(&[none], None, &|_| None).unwrap_err();
        assert!(problems.iter().any(|p| p.contains("max_binary_bytes must be above 0")), "{problems:?}");
        let gap = bearer[0].credential_gap().expect("nothing issues `crm` a credential");
        assert!(gap.contains("no credential is issued for `crm`") && gap.contains("static"), "{gap}");
        let open = prepare(&[entry(AuthConfig::None)], None, &|_| None).unwrap();
        assert_eq!(open[0].credential_gap(), None);
    }

    #[test]
    fn a_static_credential_comes_from_the_environment_and_is_never_echoed() {
        let auth = AuthConfig::Static { header: "X-Api-Key".into(), env: "CRM_KEY".into() };
        let err = resolve_auth("crm", &auth, None, &|_| None).unwrap_err();
        assert!(err.contains("CRM_KEY") && err.contains("export"), "{err}");
        let ok =
            resolve_auth("crm", &auth, None, &|n| (n == "CRM_KEY").then(|| "hunter2".to_owned())).unwrap();
        assert!(!format!("{ok:?}").contains("hunter2"));
        assert_eq!(ok.kind(), "static");
    }
}
