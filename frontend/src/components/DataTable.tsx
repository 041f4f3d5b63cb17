import { Table, type TableProps } from '@mantine/core';
import type { HTMLAttributes, ReactNode } from 'react';

/** One column: its header and how a row fills its cell. */
export interface Column<T> {
  header: string;
  cell: (row: T) => ReactNode;
}

/**
 * A table from column definitions, so a page names what each column shows
 * instead of writing out the header and cells side by side. `rowProps` adds
 * attributes to a row (the tests find a lease's row by `data-lease`).
 */
export function DataTable<T>({
  rows,
  columns,
  rowKey,
  rowProps,
  ...table
}: {
  rows: readonly T[];
  columns: Column<T>[];
  rowKey: (row: T) => string | number;
  rowProps?: (row: T) => HTMLAttributes<HTMLTableRowElement> & Record<`data-${string}`, string>;
} & Omit<TableProps, 'children' | 'data'>) {
  return (
    <Table.ScrollContainer minWidth={0} type="native">
      <Table {...table}>
        <Table.Thead>
          <Table.Tr>
            {columns.map((c) => (
              <Table.Th key={c.header}>{c.header}</Table.Th>
            ))}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rows.map((r) => (
            <Table.Tr key={rowKey(r)} {...rowProps?.(r)}>
              {columns.map((c) => (
                <Table.Td key={c.header}>{c.cell(r)}</Table.Td>
              ))}
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
