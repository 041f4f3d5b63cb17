// Category costs as plain bar tables that screen readers can read (no canvas).
/** Categories as horizontal bars: the cost by tag, mode or model. */
export function BarList({
  title,
  rows,
}: {
  title: string;
  rows: { key: string; label: string; share: number; value: string }[];
}) {
  return (
    <table style={{ width: '100%', borderCollapse: 'collapse' }} aria-label={title}>
      <tbody>
        {rows.map((r) => (
          <tr key={r.key}>
            <th scope="row" style={{ textAlign: 'left', fontWeight: 500, padding: '4px 8px 4px 0', width: '30%' }}>
              {r.label}
            </th>
            <td style={{ width: '50%' }}>
              <div className="bar-track">
                <div className="bar-fill" style={{ width: `${Math.max(r.share * 100, 1)}%` }} />
              </div>
            </td>
            <td style={{ textAlign: 'right', padding: '4px 0 4px 8px', fontVariantNumeric: 'tabular-nums' }}>{r.value}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
