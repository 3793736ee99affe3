//! Serving the router: on a listener the caller owns (`serve`), or in the background on an
//! address, with a handle that knows the bound port and stops the server (`spawn`).

use std::net::SocketAddr;

use tokio::net::{TcpListener, ToSocketAddrs};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::db::Db;
use crate::error::Result;
use crate::routes::router;

/// Serves the API on `listener` until the task is dropped or the process ends.
pub async fn serve(listener: TcpListener, db: Db) -> std::io::Result<()> {
    axum::serve(listener, router(db)).await
}

/// A server running in the background. Dropping it asks it to stop; [`Server::shutdown`]
/// also waits until it has.
#[derive(Debug)]
pub struct Server {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<std::io::Result<()>>>,
}

/// Binds `addr` (e.g. `"127.0.0.1:0"` for an ephemeral port) and serves the API in the background.
pub async fn spawn(addr: impl ToSocketAddrs, db: Db) -> Result<Server> {
    let listener = TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let (stop, stopped) = oneshot::channel::<()>();
    let app = router(db);
    let task = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
            })
            .await
    });
    Ok(Server { addr, stop: Some(stop), task: Some(task) })
}

impl Server {
    /// The address actually bound.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://<addr>`, without a trailing slash.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops accepting, lets requests in flight finish, and waits for the server to end.
    pub async fn shutdown(mut self) -> Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            match task.await {
                Ok(result) => result?,
                Err(join) => return Err(std::io::Error::other(join.to_string()).into()),
            }
        }
        Ok(())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}
