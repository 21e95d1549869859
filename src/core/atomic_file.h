// Writing a file so that it is either whole under its final name or absent.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

namespace delegato {

// Writes the parts, in order, to a temporary file beside `path`
// ("<path>.tmp.<pid>.<n>") and renames it into place: a failed write (disk
// full, file size limit, directory gone) never leaves a partial file under the
// final name, and the temporary file is removed. Throws Error
// "<path>: cannot write: <reason>" or "<path>: write failed: <reason>".
void WriteFileAtomically(const std::string& path, std::initializer_list<std::string_view> parts);

}  // namespace delegato
