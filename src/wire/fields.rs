//! The field table a typed channel's control block records beside its type's fingerprint,
//! so that a tool or another language can learn the layout of a live channel's messages
//! (a Python dtype, a C struct, `salias echo`'s columns) without the creator's source.
//!
//! Each field is encoded as
//!
//! ```text
//! u16 name length | name (UTF-8) | u16 type label length | type label | u32 offset | u32 size
//! ```
//!
//! little-endian, back to back, in offset order; the table is `len` bytes of
//! `TypeRecord::field_table`. A type whose table does not fit records none (`len` 0): the
//! fingerprint still identifies it, only its columns are unknown. A reader trusts a decoded
//! table only once it hashes to the recorded layout hash (`status`), since any peer may
//! have written these bytes.

use super::layout::MAX_FIELD_TABLE_LEN;

/// One field as the table stores it: name, type label, offset, size.
pub(crate) type EncodedField<'a> = (&'a str, &'a str, usize, usize);

/// The table of `fields`, and its length; `None` when it does not fit (or a name, label,
/// offset or size exceeds its width), so that nothing partial is recorded.
pub(crate) fn encode<'a>(
    fields: impl IntoIterator<Item = EncodedField<'a>>,
) -> Option<([u8; MAX_FIELD_TABLE_LEN], u32)> {
    let mut table = [0u8; MAX_FIELD_TABLE_LEN];
    let mut len = 0;
    let mut put = |bytes: &[u8]| -> Option<()> {
        let end = len + bytes.len();
        table.get_mut(len..end)?.copy_from_slice(bytes);
        len = end;
        Some(())
    };
    for (name, ty, offset, size) in fields {
        for text in [name, ty] {
            put(&u16::try_from(text.len()).ok()?.to_le_bytes())?;
            put(text.as_bytes())?;
        }
        put(&u32::try_from(offset).ok()?.to_le_bytes())?;
        put(&u32::try_from(size).ok()?.to_le_bytes())?;
    }
    Some((table, len as u32))
}

/// The fields `table` holds, or `None` when it is not a whole table of UTF-8 names (a
/// `len` past the array, a length running past the end, bytes that are not UTF-8).
pub(crate) fn decode(table: &[u8; MAX_FIELD_TABLE_LEN], len: u32) -> Option<Vec<(String, String, usize, usize)>> {
    let mut reader = Reader {
        rest: table.get(..len as usize)?,
    };
    let mut fields = Vec::new();
    while !reader.rest.is_empty() {
        let name = reader.text()?;
        let ty = reader.text()?;
        fields.push((name, ty, reader.word()?, reader.word()?));
    }
    Some(fields)
}

/// What is left of a table being decoded.
struct Reader<'t> {
    rest: &'t [u8],
}

impl<'t> Reader<'t> {
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, tail) = self.rest.split_first_chunk::<N>()?;
        self.rest = tail;
        Some(*head)
    }

    fn text(&mut self) -> Option<String> {
        let len = u16::from_le_bytes(self.take()?) as usize;
        let (text, tail) = self.rest.split_at_checked(len)?;
        self.rest = tail;
        Some(std::str::from_utf8(text).ok()?.to_owned())
    }

    fn word(&mut self) -> Option<usize> {
        Some(u32::from_le_bytes(self.take()?) as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_reads_back_as_written() {
        let fields = [
            ("instrument", "u64", 0, 8),
            ("book", "[[f64;4];4]", 8, 128),
            ("é", "Inner", 136, 8),
        ];
        let (table, len) = encode(fields).unwrap();
        let decoded = decode(&table, len).unwrap();
        let expected: Vec<_> = fields
            .iter()
            .map(|&(n, t, o, s)| (n.to_owned(), t.to_owned(), o, s))
            .collect();
        assert_eq!(decoded, expected);
        assert_eq!(decode(&table, 0).unwrap(), vec![]);
    }

    #[test]
    fn a_table_that_does_not_fit_is_not_recorded() {
        let long = "x".repeat(1100);
        assert!(encode([(long.as_str(), "u8", 0, 1), (long.as_str(), "u8", 1, 1)]).is_none());
        assert!(encode([(long.as_str(), "u8", 0, 1)]).is_some());
        assert!(encode([("x", "u8", 1 << 33, 1)]).is_none());
    }

    #[test]
    fn damaged_tables_are_refused() {
        let (mut table, len) = encode([("bid", "f64", 0, 8)]).unwrap();
        // Cut inside the last field, or claimed longer than the array.
        assert!(decode(&table, len - 1).is_none());
        assert!(decode(&table, MAX_FIELD_TABLE_LEN as u32 + 1).is_none());
        // A name length running past the table.
        table[0] = 0xff;
        assert!(decode(&table, len).is_none());
        // Not UTF-8.
        let (mut table, len) = encode([("bid", "f64", 0, 8)]).unwrap();
        table[2] = 0xff;
        assert!(decode(&table, len).is_none());
    }
}
