//! `oxla plugin install|list`: the pinned PJRT plugin wheels (crate
//! oxla-plugins), installed into oxla's plugin directory
//! (`$OXLA_HOME/plugins`), where plugin discovery looks.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use oxla_plugins::{Choice, Installer, Step};

/// What to do with plugins.
#[derive(Debug, Subcommand)]
pub enum PluginCommand {
    /// Download the pinned plugin wheels of each CHOICE (cpu, cuda12,
    /// cuda13, rocm, tpu) with pip, check their SHA-256 and unpack them
    /// into oxla's plugin directory; a plugin already installed with the
    /// same pins is skipped.
    Install(InstallArgs),
    /// The plugins in oxla's plugin directory: name, version, the choice
    /// that pins them, and whether they match this oxla's pins.
    List(ListArgs),
}

/// `oxla plugin install`.
#[derive(Debug, Args)]
pub struct InstallArgs {
    /// What to install: cpu (both CPU plugins), cuda12 or cuda13 (the CUDA
    /// plugin with NVIDIA's libraries, about 3 GB, x86_64), rocm (the ROCm
    /// 7 plugin; ROCm itself from the machine), tpu (libtpu).
    #[arg(required = true, value_name = "CHOICE")]
    choices: Vec<String>,
    /// Install into DIR instead of $OXLA_HOME/plugins (default
    /// ~/.cache/oxla/plugins).
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Only the plugin wheels, without the library wheels they require
    /// (the NVIDIA libraries of a CUDA plugin).
    #[arg(long)]
    without_libraries: bool,
    /// Take the wheels from DIR only, not from the package index (pip's
    /// `--no-index --find-links DIR`): wheels downloaded on another machine.
    #[arg(long, value_name = "DIR")]
    find_links: Option<PathBuf>,
}

/// `oxla plugin list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// List DIR instead of $OXLA_HOME/plugins.
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

/// Runs `oxla plugin ...`.
pub fn run(command: &PluginCommand) -> anyhow::Result<()> {
    match command {
        PluginCommand::Install(args) => install(args),
        PluginCommand::List(args) => list(args),
    }
}

fn install(args: &InstallArgs) -> anyhow::Result<()> {
    // Every choice is checked before anything is downloaded.
    let mut choices: Vec<Choice> = Vec::new();
    for given in &args.choices {
        let choice: Choice = given.parse()?;
        if !choices.contains(&choice) {
            choices.push(choice);
        }
    }
    let dest = args.dir.clone().unwrap_or_else(oxla_pjrt::plugin_dir);
    let mut installer = Installer::new(&dest).with_libraries(!args.without_libraries);
    if let Some(links) = &args.find_links {
        installer = installer
            .pip_args(["--no-index", "--find-links"])
            .pip_args([links]);
    }
    for choice in choices {
        for plugin in choice.plugins()? {
            let done = installer.install(&plugin, &mut |step| match step {
                Step::Download {
                    wheel,
                    number,
                    count,
                } if count > 1 => println!("downloading {wheel} ({number} of {count})"),
                Step::Download { wheel, .. } => println!("downloading {wheel}"),
            })?;
            let (name, version) = (plugin.name(), plugin.version());
            let dir = done.dir.display();
            if done.was_present {
                println!("plugin {name} {version} present at {dir}");
                continue;
            }
            let libraries = match (done.libraries, plugin.requires.len()) {
                (0, 0) => String::new(),
                (0, n) => format!(" without its {n} library wheels"),
                (n, _) => format!(" with {n} library wheels"),
            };
            println!("installed plugin {name} {version}{libraries} at {dir}");
        }
    }
    Ok(())
}

fn list(args: &ListArgs) -> anyhow::Result<()> {
    let dest = args.dir.clone().unwrap_or_else(oxla_pjrt::plugin_dir);
    let found = oxla_plugins::list(&dest)?;
    if found.is_empty() {
        println!("no plugins in {}", dest.display());
    } else {
        println!("plugins in {}:", dest.display());
        let width =
            |f: fn(&oxla_plugins::InstalledPlugin) -> usize| found.iter().map(f).max().unwrap_or(0);
        let name_width = width(|p| p.name.len());
        let version_width = width(|p| p.version.len());
        for p in &found {
            let choice = p.choice.map_or("-", Choice::name);
            println!(
                "  {:name_width$}  {:version_width$}  {choice:6}  {}",
                p.name, p.version, p.status
            );
        }
    }
    println!(
        "choices: {} (oxla plugin install CHOICE...)",
        Choice::names()
    );
    Ok(())
}
