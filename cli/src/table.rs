//! Text tables: columns padded to their widest cell, two spaces apart.

/// The rows as lines of aligned columns, each line ending in `\n`, trailing spaces trimmed.
/// Rows may be shorter than the widest; a missing cell is empty.
pub(crate) fn render(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|column| {
            rows.iter()
                .filter_map(|row| row.get(column))
                .map(|cell| cell.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut text = String::new();
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:width$}"))
            .collect();
        text += cells.join("  ").trim_end();
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::render;

    #[test]
    fn columns_are_as_wide_as_their_widest_cell() {
        let rows = [
            vec!["A".into(), "BB".into(), "C".into()],
            vec!["aaa".into(), "b".into()],
        ];
        assert_eq!(render(&rows), "A    BB  C\naaa  b\n");
        assert_eq!(render(&[]), "");
    }
}
