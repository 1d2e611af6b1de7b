//! The TPU plugin (libtpu, which ci/setup installs on x86_64) on a machine
//! without a TPU: discovery finds it, it loads, and the answer is one clear
//! sentence (the plugin loaded, no TPU was found), quickly, and without
//! initializing libtpu, whose initialization would ask the cloud's
//! metadata server for minutes.

use std::time::{Duration, Instant};

use oxla_pjrt::{Api, Client, ClientOptions, Error, Platform, SearchPlaces};

#[test]
fn without_a_tpu_the_tpu_plugin_loads_and_says_no_tpu_was_found() {
    if std::env::consts::ARCH != "x86_64" || !oxla_pjrt::tpu_chips().is_empty() {
        return; // libtpu is pinned for x86_64; a TPU VM has chips.
    }
    let found = SearchPlaces::from_environment()
        .find(Platform::Tpu, None)
        .expect("ci/setup installs libtpu into $OXLA_HOME/plugins on x86_64");
    assert!(found.ends_with("libtpu/libtpu.so"), "{}", found.display());

    let started = Instant::now();
    let err = Client::for_platform(Platform::Tpu, &ClientOptions::new())
        .map(|_| ())
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "took {:?}",
        started.elapsed()
    );
    let Error::NoDevices { platform, api, .. } = &err else {
        panic!("expected NoDevices, got {err}");
    };
    assert_eq!(*platform, Platform::Tpu);
    assert_eq!(api.major, 0);
    let text = err.to_string();
    assert!(
        text.starts_with("the tpu plugin ")
            && text.contains("libtpu.so loaded (PJRT C API 0.")
            && text.contains("and no TPU was found on this machine")
            && text.contains("0x1ae0")
            && !text.contains('\n'),
        "{text}"
    );
    // The library itself opens and names its version without initializing.
    assert_eq!(Api::probe(&found).unwrap(), *api);
}
