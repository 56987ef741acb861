use anyhow::Result;
use clap::Parser;

use silt::cli::{Cli, Command};
use silt_runtime::app::App;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    // every setting the run reads from the environment, read once
    silt_config::env::capture();
    // `silt grep … | head` should end quietly, as other shell tools do
    #[cfg(unix)]
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // stdout may be the MCP pipe: diagnostics go to stderr only.
    // colour codes only for a person at a terminal, never in a log file
    let colour = std::io::IsTerminal::is_terminal(&std::io::stderr());
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(colour)
        .with_env_filter(
            silt_config::env::text("SILT_LOG")
                .and_then(|f| tracing_subscriber::EnvFilter::try_new(f).ok())
                .unwrap_or_else(|| "warn".into()),
        )
        .init();
    match run(Cli::parse()).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("silt: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> Result<()> {
    if let Command::PdfText(args) = &cli.command {
        silt_fetch::pdf::child_main(&args.file);
    }
    // the token and API keys: a folder or env file others could read is
    // made private, with a warning
    silt_files::private::check_config();
    // installing a model needs no runtime
    if let Command::Models(cmd) = cli.command {
        return silt::cli::models::run(cmd).await;
    }
    // the token needs no runtime: a client (or the load bench) asks for it
    if let Command::HttpToken(args) = &cli.command {
        let config = silt_config::Config::discover()?;
        let token = silt_mcp::auth::Token::load_or_create(&config.token_file())?;
        if args.write_env {
            let env = silt_files::private::env_file()
                .ok_or_else(|| anyhow::anyhow!("no $HOME and no $SILT_ENV_FILE"))?;
            silt_files::private::set_env_line(&env, "SILT_HTTP_TOKEN", token.secret())?;
            eprintln!(
                "silt: SILT_HTTP_TOKEN is set in {} (mode 600)",
                env.display()
            );
        } else if args.path {
            println!("{}", token.path.display());
        } else {
            println!("{}", token.secret());
        }
        return Ok(());
    }
    let app = App::open(!cli.no_compile_cache)?;
    match cli.command {
        Command::Serve(args) if args.http => {
            use silt_mcp::http::{BoundServer, ENDPOINT, HttpOptions, shutdown_on_signals};
            let env_port = silt_config::env::var("SILT_HTTP_PORT");
            let options = HttpOptions::resolve(&app.config, args.port, env_port.as_deref())?;
            let shutdown = shutdown_on_signals()?;
            if !options.addr.ip().is_loopback() {
                eprintln!(
                    "silt: WARNING: serving on {} over plain HTTP: the token crosses the network \
                     in clear; put a TLS proxy in front or bind 127.0.0.1",
                    options.addr
                );
            }
            eprintln!(
                "silt: callers send `Authorization: Bearer <token>`; the token is in {} \
                 (`silt http-token` prints it); file tools read under {} root(s)",
                options.token.path.display(),
                options.roots.paths().count()
            );
            let server = BoundServer::bind(options).await?;
            // the line a launcher or a test waits for; the port is the real
            // one when 0 was asked for
            eprintln!(
                "silt: serving MCP at http://{}{ENDPOINT}",
                server.local_addr()?
            );
            server.serve(app.runtime, app.config, shutdown).await?;
            eprintln!("silt: stopped");
            Ok(())
        }
        Command::Serve(_) => {
            silt_mcp::serve_stdio(app.runtime, app.config).await?;
            // stdin is read by a blocking thread no one can cancel: after a
            // SIGTERM's drain, a client still holding stdin open would keep
            // the runtime's shutdown waiting on that read for ever
            std::process::exit(0)
        }
        Command::Ask(cmd) => silt::cli::ask::run(&app, cmd).await,
        Command::Rank(args) => silt::cli::shortcuts::rank(&app, args).await,
        Command::Route(args) => silt::cli::shortcuts::route(&app, args).await,
        Command::Grep(args) => silt::cli::shortcuts::grep(&app, args).await,
        Command::Verify(args) => silt::cli::shortcuts::verify(&app, args).await,
        Command::Search(args) => silt::cli::shortcuts::search(&app, args).await,
        Command::SearchChain(cmd) => silt::cli::search_chain::run(&app, cmd).await,
        Command::PdfText(_) | Command::Models(_) => unreachable!("handled before the app opens"),
        Command::Plugins(cmd) => silt::cli::plugins::run(&app, cmd).await,
        Command::Ledger(args) => silt::cli::ledger::run(&app, args).await,
        Command::Demo(args) => silt::cli::demo::run(&app, args).await,
        Command::Eval(silt::cli::EvalCommand::Judge(args)) => {
            silt_eval::judge::run(&app, args).await
        }
        Command::Eval(silt::cli::EvalCommand::Ledger(args)) => {
            silt_eval::ledger::run(&app, args).await
        }
        Command::Eval(silt::cli::EvalCommand::Sleep(args)) => {
            silt_eval::sleep::run(&app, args).await
        }
        Command::Eval(silt::cli::EvalCommand::Verify(args)) => {
            silt_eval::verify::run(&app, args).await
        }
        Command::HttpToken(_) => {
            unreachable!("handled before the app opens")
        }
    }
}
