//! Raw byte messages of varying length, for users with their own encoding (SBE,
//! protobuf, flatbuffers): offer a slice, or claim room and encode straight into the ring.
//!
//! Run: `cargo run --example raw_bytes`

use salias::{Config, RawFifoMpsc};

fn main() -> Result<(), salias::Error> {
    let name = format!("raw-bytes-{}", std::process::id());
    // Messages up to 256 bytes; a 4 KiB ring, so frames wrap around its end.
    let channel = RawFifoMpsc::create(&Config::new(&name).capacity(4096).max_message_size(256))?;
    let mut publisher = channel.publisher()?;
    let mut subscriber = channel.subscriber()?;

    let mut total_bytes = 0;
    for round in 0..1_000u32 {
        let text = format!(
            "order {round} side={} qty={}",
            ["buy", "sell"][round as usize % 2],
            round * 10
        );
        if round % 2 == 0 {
            publisher.offer(text.as_bytes())?;
        } else {
            // Encode in place: claim the maximum, write, commit what was used.
            let mut claim = publisher.claim(256)?;
            claim[..text.len()].copy_from_slice(text.as_bytes());
            claim.commit_len(text.len())?;
        }
        let message = subscriber.try_recv()?.expect("published above");
        assert_eq!(&*message, text.as_bytes());
        total_bytes += message.len();
        if round % 250 == 0 {
            println!("received {:?}", String::from_utf8_lossy(&message));
        }
    }
    let too_big = publisher.offer(&[0u8; 257]).unwrap_err();
    println!("1000 messages, {total_bytes} bytes, round trip checked; an oversized offer says: {too_big}");
    Ok(())
}
