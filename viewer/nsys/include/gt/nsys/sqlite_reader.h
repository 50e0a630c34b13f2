// Reads the tables of an Nsight Systems SQLite export (`nsys export --type sqlite`) into the viewer core's
// plain columns (gt/viewer/nsys.h). The only code that talks to SQLite on the loading path: libsqlite3
// natively, SQLite compiled to wasm (Debian's source package, scripts/setup.sh) in the page.
#pragma once

#include <cstdint>
#include <span>

#include "gt/status.h"
#include "gt/viewer/nsys.h"

namespace gt::nsys {

// The database is opened in memory from `bytes` (read-only, never written back). Fails with a clear message
// on content SQLite cannot read (truncated, corrupt); tables or columns the file lacks are simply absent.
StatusOr<viewer::NsysTables> ReadNsysSqlite(std::span<const uint8_t> bytes);

// Makes LoadTrace / TraceLoader open SQLite content through ReadNsysSqlite. Call once at startup.
void RegisterNsysReader();

}  // namespace gt::nsys
