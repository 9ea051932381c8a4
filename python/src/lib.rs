//! The native part of the `salias` Python package (`salias._salias`): channels of the
//! four kinds, publishers, subscribers and zero-copy message views, built on the same
//! kind-erased handles as the C ABI. The Python modules in `salias/` add the kind classes,
//! numpy dtypes, asyncio and the exception classes.

mod buffers;
mod channel;
mod errors;
mod publisher;
mod status;
mod subscriber;
mod types;

use pyo3::prelude::*;

#[pymodule]
fn _salias(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<channel::Channel>()?;
    module.add_class::<publisher::Publisher>()?;
    module.add_class::<subscriber::Subscriber>()?;
    module.add_class::<subscriber::Message>()?;
    module.add_class::<types::MessageType>()?;
    module.add_function(wrap_pyfunction!(channel::create, module)?)?;
    module.add_function(wrap_pyfunction!(channel::connect, module)?)?;
    module.add_function(wrap_pyfunction!(types::recorded_type, module)?)?;
    module.add_function(wrap_pyfunction!(status::status, module)?)?;
    module.add_function(wrap_pyfunction!(status::remove, module)?)?;
    module.add_function(wrap_pyfunction!(status::remove_stale, module)?)?;
    module.add_function(wrap_pyfunction!(status::list_channels, module)?)?;
    Ok(())
}
