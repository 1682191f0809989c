#ifndef IFMETER_CZLIB_SHIM_H
#define IFMETER_CZLIB_SHIM_H
/* zlib's crc32, which checks each record of the save journal (IfMeterStore's SaveJournal). */
#include <zlib.h>
#endif
