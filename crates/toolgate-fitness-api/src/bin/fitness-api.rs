//! `fitness-api --listen ADDR --db URL [--demo-user ID]`: runs the reference backend on its own
//! and prints the bound address (`listening on http://127.0.0.1:PORT`). With `--demo-user` it
//! creates that user if needed, seeds demo data and prints a fresh token for it.

use std::process::ExitCode;

const USAGE: &str = "usage: fitness-api [--listen 127.0.0.1:8080] [--db sqlite:fitness.db] [--demo-user ID]";

#[derive(Debug)]
struct Args {
    listen: String,
    db: String,
    demo_user: Option<String>,
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut parsed =
        Args { listen: "127.0.0.1:8080".into(), db: "sqlite:fitness.db".into(), demo_user: None };
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) => (f.to_owned(), Some(v.to_owned())),
            None => (arg, None),
        };
        let mut value =
            || inline.clone().or_else(|| args.next()).ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--listen" => parsed.listen = value()?,
            "--db" => parsed.db = value()?,
            "--demo-user" => parsed.demo_user = Some(value()?),
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(parsed)
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(message) => {
            if !message.is_empty() {
                eprintln!("fitness-api: {message}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fitness-api: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<(), toolgate_fitness_api::Error> {
    let db = toolgate_fitness_api::connect(&args.db).await?;
    if let Some(user) = &args.demo_user {
        let token = match toolgate_fitness_api::create_user(&db, user).await {
            Ok(token) => token,
            Err(toolgate_fitness_api::Error::Conflict(_)) => {
                toolgate_fitness_api::issue_token(&db, user).await?
            }
            Err(e) => return Err(e),
        };
        let today = chrono::Utc::now().date_naive();
        let seeded = toolgate_fitness_api::seed_demo(&db, user, today).await?;
        println!("demo user {user}: token {token} ({seeded:?})");
    }
    let listener = tokio::net::TcpListener::bind(&args.listen).await?;
    println!("listening on http://{}", listener.local_addr()?);
    toolgate_fitness_api::serve(listener, db).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Result<Args, String> {
        parse(list.iter().map(|s| s.to_string()))
    }

    #[test]
    fn flags_take_a_value_inline_or_next() {
        let a = args(&["--listen", "127.0.0.1:0", "--db=sqlite::memory:"]).unwrap();
        assert_eq!((a.listen.as_str(), a.db.as_str()), ("127.0.0.1:0", "sqlite::memory:"));
        assert!(args(&["--listen"]).unwrap_err().contains("needs a value"));
        assert!(args(&["--port", "1"]).unwrap_err().contains("unknown argument"));
    }
}
