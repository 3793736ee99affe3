//! Where one route's request goes and with which credential: its own server
//! ([`Route::server`], mapped by [`HttpOptions::servers`]) else the base URL, and the first of
//! its security schemes ([`Route::security`]) that [`HttpOptions::schemes`] holds, else the
//! executor's auth.

use std::collections::BTreeMap;

use reqwest::Url;
use toolgate_schema::{Route, RouteTable};

use crate::executor::check_base;
use crate::{Auth, Error, HttpExecutor, HttpOptions, Result};

/// No credential: what a route with `security = []` sends.
static NO_AUTH: Auth = Auth::None;

/// Every scheme's auth and every server's base URL checked, the servers parsed.
pub(crate) fn check(options: &HttpOptions) -> Result<BTreeMap<String, Url>> {
    for (name, auth) in &options.schemes {
        auth.check().map_err(|e| match e {
            Error::Auth(reason) => Error::Auth(format!("scheme `{name}`: {reason}")),
            other => other,
        })?;
    }
    options
        .servers
        .iter()
        .map(|(server, base)| Ok((server.trim_end_matches('/').to_owned(), check_base(base)?)))
        .collect()
}

impl HttpExecutor {
    /// The base URL the route's request goes to.
    pub(crate) fn base_for(&self, route: &Route) -> &Url {
        match &route.server {
            // Checked when the tool was built: an undeclared server never gets this far.
            Some(server) => self.server(server).unwrap_or(self.base_url()),
            None => self.base_url(),
        }
    }

    fn server(&self, server: &str) -> Option<&Url> {
        self.servers().get(server.trim_end_matches('/'))
    }

    /// The auth of the route's request.
    pub(crate) fn auth_for(&self, route: &Route) -> &Auth {
        let options = self.options();
        match route.security.as_deref() {
            None => &options.auth,
            Some([]) => &NO_AUTH,
            Some(schemes) => schemes.iter().find_map(|s| options.schemes.get(s)).unwrap_or(&options.auth),
        }
    }

    /// Every route of `table` with its own server has it declared.
    pub(crate) fn check_servers(&self, table: &RouteTable) -> Result<()> {
        for route in &table.routes {
            if let Some(server) = route.server.as_ref().filter(|s| self.server(s).is_none()) {
                return Err(Error::UndeclaredServer {
                    tool: table.tool.clone(),
                    op: route.op.clone(),
                    server: server.clone(),
                });
            }
        }
        Ok(())
    }
}
