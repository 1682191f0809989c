#ifndef IFMETER_CSQLITE_SHIM_H
#define IFMETER_CSQLITE_SHIM_H
#include <sqlite3.h>
#endif
