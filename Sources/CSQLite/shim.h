#ifndef IFMETER_CSQLITE_SHIM_H
#define IFMETER_CSQLITE_SHIM_H
#include <sqlite3.h>

/* sqlite3_db_config is variadic, which Swift cannot call: one fixed-argument wrapper per use. */

/* SQLITE_DBCONFIG_DEFENSIVE on: no writable_schema, no shadow-table writes, no pragmas that
 * can corrupt the file. For a database ifmeter did not write (a vnStat import). */
static inline int ifm_sqlite3_defensive(sqlite3 *db) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)0);
}

/* SQLITE_DBCONFIG_TRUSTED_SCHEMA off: functions the schema names (in views, triggers,
 * generated columns, index expressions) run only if they are innocuous. */
static inline int ifm_sqlite3_untrusted_schema(sqlite3 *db) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)0);
}
#endif
