//! `oxla doctor`: which plugins are where, and what is missing.

use std::collections::BTreeSet;

use oxla_pjrt::{
    Api, ApiVersion, CandidateSource, Client, ClientOptions, Platform, SearchPlaces, oxla_home,
};

/// Prints, for each platform, every plugin found (with its versions and
/// whether a client starts) or what to install; fails if no CPU plugin works.
pub fn run() -> anyhow::Result<()> {
    let places = SearchPlaces::from_environment();
    println!("oxla home:      {}", oxla_home().display());
    println!("plugin dir:     {}", places.plugin_dir.display());
    match &places.env_plugin {
        Some(p) => println!("OXLA_PJRT_PLUGIN: {}", p.display()),
        None => println!("OXLA_PJRT_PLUGIN: (not set)"),
    }
    println!("oxla's PJRT C API header: {}", ApiVersion::HEADER);
    let mut cpu_ok = false;
    // A plugin named by OXLA_PJRT_PLUGIN is for whatever platform it says
    // it is: listed once, under its own heading, with the platform its
    // client reports, not under every platform discovery would offer it to.
    if let Some(path) = &places.env_plugin {
        println!("\nOXLA_PJRT_PLUGIN:");
        if path.is_file() {
            let works = describe(None, path, CandidateSource::Environment);
            cpu_ok |= works == Some(Platform::Cpu);
        } else {
            println!("  {} does not exist", path.display());
        }
    }
    for platform in Platform::ALL {
        println!("\n{platform}:");
        let mut seen = BTreeSet::new();
        let found: Vec<_> = places
            .candidates(platform, None)
            .into_iter()
            .filter(|c| c.source != CandidateSource::Environment)
            .filter(|c| c.path.is_file() && seen.insert(c.path.clone()))
            .collect();
        if found.is_empty() {
            println!("  missing: {}", platform.install_hint());
            continue;
        }
        for candidate in found {
            let works = describe(Some(platform), &candidate.path, candidate.source);
            cpu_ok |= platform == Platform::Cpu && works.is_some();
        }
    }
    if cpu_ok {
        Ok(())
    } else {
        anyhow::bail!("no working CPU plugin: {}", Platform::Cpu.install_hint())
    }
}

/// Prints one plugin's versions and whether a client starts; the platform
/// its client reports if it does. `platform` is the platform it was found
/// for (its libraries are prepared for it), `None` for a plugin named
/// directly.
fn describe(
    platform: Option<Platform>,
    path: &std::path::Path,
    source: CandidateSource,
) -> Option<Platform> {
    println!("  {} ({source})", path.display());
    let loaded = match platform {
        Some(platform) => Api::load_for(platform, path),
        None => Api::load(path),
    };
    let api = match loaded {
        Ok(api) => api,
        Err(e @ oxla_pjrt::Error::NoDevices { .. }) => {
            println!("    {e}");
            return None;
        }
        Err(e) => {
            println!("    cannot load: {e}");
            return None;
        }
    };
    println!("    PJRT C API {}", api.version());
    if let Ok(attributes) = api.plugin_attributes() {
        for a in attributes.iter().filter(|a| a.name.contains("version")) {
            println!("    {} = {}", a.name, a.value);
        }
    }
    match Client::new(api, &ClientOptions::new()) {
        Ok(client) => {
            let name = client.platform_name().unwrap_or_default();
            let version = client.platform_version().unwrap_or_default();
            let devices = client.devices().map(|d| d.len()).unwrap_or(0);
            println!("    ok: platform {name} {version}, {devices} devices");
            Platform::ALL.into_iter().find(|p| p.name() == name)
        }
        Err(e) => {
            println!("    client does not start: {e}");
            None
        }
    }
}
