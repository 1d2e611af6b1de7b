//! `oxla devices`: what a plugin exposes.

use clap::Args;

use crate::plugin_args::PluginArgs;

/// Arguments of `oxla devices`.
#[derive(Debug, Args)]
pub struct DevicesArgs {
    #[command(flatten)]
    plugin: PluginArgs,
}

/// Prints the plugin, platform and each device with its attributes.
pub fn run(args: &DevicesArgs) -> anyhow::Result<()> {
    let client = args.plugin.client()?;
    let api = client.api();
    println!("plugin:           {}", api.path().display());
    println!(
        "PJRT C API:       {} (oxla's header: {})",
        api.version(),
        oxla_pjrt::ApiVersion::HEADER
    );
    println!("platform:         {}", client.platform_name()?);
    println!("platform version: {}", client.platform_version()?);
    println!("process index:    {}", client.process_index()?);
    let devices = client.devices()?;
    println!("devices:          {}", devices.len());
    for device in devices {
        let memories: Vec<String> = device
            .addressable_memories()?
            .iter()
            .map(|m| m.kind())
            .collect::<Result<_, _>>()?;
        println!(
            "  [{}] {} kind={} process={} addressable={} memories=[{}]",
            device.id()?,
            device.description_string()?,
            device.kind()?,
            device.process_index()?,
            device.is_addressable()?,
            memories.join(", ")
        );
        for attribute in device.attributes()? {
            println!("      {} = {}", attribute.name, attribute.value);
        }
    }
    Ok(())
}
