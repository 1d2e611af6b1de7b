//! Clients: create options, platform, devices, memories.

use oxla_pjrt::{Api, Client, ClientOptions, Value};

use crate::support::{client, pinned_plugins};

#[test]
fn cpu_device_count_sets_the_number_of_devices() {
    for p in pinned_plugins() {
        for n in [1, 3] {
            let c = client(&p, n);
            let devices = c.devices().unwrap();
            assert_eq!(devices.len() as i64, n, "{}", p.name);
            assert_eq!(c.addressable_devices().unwrap().len() as i64, n);
            let ids: Vec<i32> = devices.iter().map(|d| d.id().unwrap()).collect();
            assert_eq!(ids, (0..n as i32).collect::<Vec<_>>());
        }
    }
}

#[test]
fn platform_and_devices_describe_themselves() {
    for p in pinned_plugins() {
        let c = client(&p, 2);
        assert_eq!(c.platform_name().unwrap(), "cpu", "{}", p.name);
        assert!(!c.platform_version().unwrap().is_empty());
        assert_eq!(c.process_index().unwrap(), 0);
        for d in c.devices().unwrap() {
            assert_eq!(d.kind().unwrap().to_lowercase(), "cpu");
            assert!(d.is_addressable().unwrap());
            assert_eq!(d.process_index().unwrap(), 0);
            assert!(d.local_hardware_id().unwrap() >= 0);
            assert!(!d.description_string().unwrap().is_empty());
            assert!(!d.debug_string().unwrap().is_empty());
            d.attributes().unwrap();
            let memories = d.addressable_memories().unwrap();
            assert!(!memories.is_empty(), "{}: no memories", p.name);
            let default = d.default_memory().unwrap();
            assert!(
                memories
                    .iter()
                    .any(|m| m.id().unwrap() == default.id().unwrap())
            );
            assert!(!default.kind().unwrap().is_empty());
        }
        assert!(!c.addressable_memories().unwrap().is_empty());
    }
}

#[test]
fn an_unknown_create_option_is_a_plugin_error_or_ignored_never_a_crash() {
    for p in pinned_plugins() {
        let api = Api::load(&p.path).unwrap();
        let options = ClientOptions::new().set("no_such_option_in_any_plugin", Value::Int64(1));
        // Plugins either reject unknown options with a message or ignore them.
        if let Err(e) = Client::new(api.clone(), &options) {
            assert!(
                e.to_string().contains("no_such_option_in_any_plugin"),
                "{}: {e}",
                p.name
            );
        }
        // A known option of the wrong type is refused before it reaches the
        // plugin (XLA's CPU plugin aborts the process on it).
        let wrong = ClientOptions::new().set("cpu_device_count", Value::String("four".into()));
        let err = Client::new(api, &wrong).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid argument: client option \"cpu_device_count\" must be int64, got string \"four\""
        );
    }
}

#[test]
fn options_replace_earlier_values_of_the_same_name() {
    let o = ClientOptions::new()
        .cpu_device_count(2)
        .cpu_device_count(5)
        .gpu_preallocate(false);
    assert_eq!(o.values().len(), 2);
    assert_eq!(o.values()[0].value, Value::Int64(5));
    assert_eq!(o.values()[1].value, Value::Bool(false));
    let g = ClientOptions::new().gpu_memory_fraction(0.5);
    assert_eq!(g.values()[0].name, "memory_fraction");
}
