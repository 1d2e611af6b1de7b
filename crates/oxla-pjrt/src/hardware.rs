//! Whether this machine has a platform's devices, asked of the kernel
//! before a plugin is initialized (as JAX does before it initializes
//! libtpu): TPU chips are PCI devices of Google's vendor id.

use std::path::PathBuf;

/// Google's PCI vendor id, which every TPU chip reports.
const GOOGLE_PCI_VENDOR: &str = "0x1ae0";

/// Where [`tpu_chips`] looks, in words for an error message.
pub const TPU_SEARCH: &str =
    "no PCI device of Google's vendor id 0x1ae0 under /sys/bus/pci/devices";

/// The PCI devices of this machine that are TPU chips (their sysfs
/// directories); empty where there is none, or no sysfs.
pub fn tpu_chips() -> Vec<PathBuf> {
    let Ok(devices) = std::fs::read_dir("/sys/bus/pci/devices") else {
        return Vec::new();
    };
    devices
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|device| {
            std::fs::read_to_string(device.join("vendor"))
                .is_ok_and(|vendor| vendor.trim() == GOOGLE_PCI_VENDOR)
        })
        .collect()
}
