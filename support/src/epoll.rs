//! An epoll set watching one descriptor for input, level-triggered: how the wake-up
//! harnesses wait on a readiness descriptor (salias's, or a prototype's) as a raw event
//! loop would.

use std::io;
use std::os::fd::{AsFd, OwnedFd};

use rustix::event::epoll;

/// An epoll set with one descriptor in it.
pub struct Readable(OwnedFd);

impl Readable {
    /// A set watching `fd` for input.
    pub fn watching(fd: impl AsFd) -> io::Result<Readable> {
        let set = epoll::create(epoll::CreateFlags::CLOEXEC)?;
        epoll::add(&set, fd, epoll::EventData::new_u64(0), epoll::EventFlags::IN)?;
        Ok(Readable(set))
    }

    /// Sleeps until the descriptor is readable.
    pub fn wait(&self) -> io::Result<()> {
        let mut events: Vec<epoll::Event> = Vec::with_capacity(1);
        loop {
            events.clear();
            match epoll::wait(&self.0, rustix::buffer::spare_capacity(&mut events), None) {
                Ok(n) if n > 0 => return Ok(()),
                Ok(_) | Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_written_pipe_wakes_the_wait() {
        let (reader, writer) = std::io::pipe().unwrap();
        let set = Readable::watching(&reader).unwrap();
        (&writer).write_all(&[1]).unwrap();
        set.wait().unwrap();
    }
}
