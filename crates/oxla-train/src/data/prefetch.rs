//! Running a loader's pipeline on a background thread that keeps a few
//! items ready, so the host work of the next batches (reading, transforms,
//! stacking, the transfer to the device) overlaps the training step.

use std::sync::mpsc::{Receiver, sync_channel};
use std::thread::JoinHandle;

use super::error::DataError;

/// What the pipeline yields: an item and the stream position after it.
pub(crate) type Produced<B> = Result<(B, u64), DataError>;

/// The pipeline of a loader, from some position on.
pub(crate) type Pipeline<B> = Box<dyn Iterator<Item = Produced<B>> + Send>;

/// The pipeline running on its own thread, `depth` items ready in a
/// bounded channel (plus the one the thread is making). Dropping it
/// closes the channel, which ends the thread after the item it is making,
/// and joins it.
pub(crate) struct Prefetch<B> {
    items: Option<Receiver<Produced<B>>>,
    thread: Option<JoinHandle<()>>,
}

// Device batches are made on the prefetch thread: `Array` must be `Send`.
const _: () = {
    const fn send<T: Send>() {}
    send::<oxla::Array>();
};

impl<B: Send + 'static> Prefetch<B> {
    /// Starts `pipeline` on a thread.
    pub(crate) fn start(pipeline: Pipeline<B>, depth: usize) -> Result<Prefetch<B>, DataError> {
        let (send, items) = sync_channel(depth);
        let thread = std::thread::Builder::new()
            .name("oxla-data-prefetch".into())
            .spawn(move || {
                for item in pipeline {
                    if send.send(item).is_err() {
                        return;
                    }
                }
            })
            .map_err(|e| DataError::option("DataLoader::prefetch", format!("no thread: {e}")))?;
        Ok(Prefetch {
            items: Some(items),
            thread: Some(thread),
        })
    }

    /// The next item; `None` once the pipeline has ended.
    pub(crate) fn next(&mut self) -> Option<Produced<B>> {
        let received = self.items.as_ref()?.recv();
        match received {
            Ok(item) => Some(item),
            Err(_) => {
                // The sender is gone: the pipeline ended, or its thread
                // panicked outside the transforms (which catch their own).
                self.items = None;
                let panicked = self.thread.take().is_some_and(|t| t.join().is_err());
                panicked.then_some(Err(DataError::ThreadDied("prefetch")))
            }
        }
    }
}

impl<B> Drop for Prefetch<B> {
    fn drop(&mut self) {
        self.items = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
