import type { ColumnType } from 'kysely'

/** int8 arrives as a string from `pg` and as a number from PGlite; `toBigInt` of `../database.ts` reads either. */
export type Int8 = ColumnType<string | number | bigint, string | number | bigint, string | number | bigint>
export type Timestamp = ColumnType<Date, Date | string, Date | string>
