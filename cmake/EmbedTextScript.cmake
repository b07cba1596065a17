# Script mode helper for tunefleet_embed_text(). Splits the text into chunks so
# no string literal exceeds compiler limits, and uses a raw-string delimiter
# that does not occur in OpenCL or C++ sources.
file(READ "${INPUT}" content)
string(LENGTH "${content}" len)
set(body "")
set(pos 0)
while(pos LESS len)
  string(SUBSTRING "${content}" ${pos} 8000 chunk)
  string(APPEND body "R\"tfembed(${chunk})tfembed\"\n")
  math(EXPR pos "${pos} + 8000")
endwhile()
if(body STREQUAL "")
  set(body "\"\"")
endif()
file(WRITE "${OUTPUT}.tmp"
"// Generated from ${INPUT} by cmake/EmbedTextScript.cmake. Do not edit.\n#include \"absl/strings/string_view.h\"\nnamespace ${NAMESPACE} {\nabsl::string_view ${SYMBOL}() {\n  static constexpr char kText[] =\n${body};\n  return absl::string_view(kText, sizeof(kText) - 1);\n}\n}  // namespace ${NAMESPACE}\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
