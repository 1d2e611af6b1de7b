//! Plugin discovery: order of places, and the error when nothing is found.

use std::path::PathBuf;

use oxla_pjrt::{CandidateSource, Error, Platform, SearchPlaces};

fn touch(path: &std::path::Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, b"").unwrap();
}

#[test]
fn explicit_path_wins_then_environment_then_plugin_dir_then_site_packages() {
    let root = tempfile::tempdir().unwrap();
    let explicit = root.path().join("explicit.so");
    let from_env = root.path().join("env.so");
    let plugin_dir = root.path().join("plugins");
    let unpacked = plugin_dir.join("xla-cpu-pjrt-0.0.1/xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so");
    let site = root.path().join("site-packages");
    let from_site = site.join("xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so");
    for p in [&explicit, &from_env, &unpacked, &from_site] {
        touch(p);
    }
    let places = SearchPlaces {
        env_plugin: Some(from_env.clone()),
        plugin_dir: plugin_dir.clone(),
        site_packages: vec![site.clone()],
    };
    assert_eq!(
        places.find(Platform::Cpu, Some(&explicit)).unwrap(),
        explicit
    );
    assert_eq!(places.find(Platform::Cpu, None).unwrap(), from_env);
    let no_env = SearchPlaces {
        env_plugin: None,
        ..places.clone()
    };
    assert_eq!(no_env.find(Platform::Cpu, None).unwrap(), unpacked);
    std::fs::remove_file(&unpacked).unwrap();
    assert_eq!(no_env.find(Platform::Cpu, None).unwrap(), from_site);
    let sources: Vec<CandidateSource> = places
        .candidates(Platform::Cpu, Some(&explicit))
        .iter()
        .map(|c| c.source)
        .collect();
    assert_eq!(sources[0], CandidateSource::Explicit);
    assert_eq!(sources[1], CandidateSource::Environment);
    assert_eq!(sources.last(), Some(&CandidateSource::SitePackages));
}

#[test]
fn a_missing_explicit_or_environment_path_is_an_error_not_a_fallback() {
    let root = tempfile::tempdir().unwrap();
    let places = SearchPlaces {
        env_plugin: Some(root.path().join("typo.so")),
        plugin_dir: root.path().join("plugins"),
        site_packages: vec![],
    };
    let err = places.find(Platform::Cpu, None).unwrap_err();
    assert!(
        err.to_string().contains("typo.so") && err.to_string().contains("OXLA_PJRT_PLUGIN"),
        "{err}"
    );
    let err = places
        .find(Platform::Cpu, Some(&root.path().join("explicit.so")))
        .unwrap_err();
    assert!(err.to_string().contains("explicit.so"), "{err}");
}

#[test]
fn nothing_found_lists_every_place_and_how_to_install() {
    let root = tempfile::tempdir().unwrap();
    let site = root.path().join("site-packages");
    let places = SearchPlaces {
        env_plugin: None,
        plugin_dir: root.path().join("plugins"),
        site_packages: vec![site.clone()],
    };
    for platform in Platform::ALL {
        let err = places.find(platform, None).unwrap_err();
        let Error::PluginNotFound { searched, .. } = &err else {
            panic!("{err}")
        };
        let text = err.to_string();
        assert!(text.contains(&format!("platform {platform}")), "{text}");
        assert!(
            text.contains(&root.path().join("plugins").display().to_string()),
            "{text}"
        );
        for relative in platform.known_library_paths() {
            let expected: PathBuf = site.join(relative);
            assert!(
                searched.contains(&expected),
                "{expected:?} not in {searched:?}"
            );
            assert!(text.contains(&expected.display().to_string()), "{text}");
        }
        assert!(text.contains("install"), "{text}");
    }
}

#[test]
fn platform_names_parse() {
    for p in Platform::ALL {
        assert_eq!(p.name().parse::<Platform>().unwrap(), p);
    }
    assert!("metal".parse::<Platform>().is_err());
}
