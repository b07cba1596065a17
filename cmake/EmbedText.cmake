# tunefleet_embed_text(<out_var> <namespace> <symbol> <input_file>)
# Generates a .cc file defining `absl::string_view <namespace>::<symbol>()` that
# returns the contents of <input_file>, so OpenCL sources and headers ship
# inside the binaries. The generated file is regenerated when the input changes,
# and compiled as a translation unit of its own.
function(tunefleet_embed_text out_var ns symbol input)
  get_filename_component(abs_input "${input}" ABSOLUTE)
  set(output "${CMAKE_CURRENT_BINARY_DIR}/embedded_${symbol}.cc")
  add_custom_command(
    OUTPUT "${output}"
    COMMAND ${CMAKE_COMMAND} -DINPUT=${abs_input} -DOUTPUT=${output}
            -DNAMESPACE=${ns} -DSYMBOL=${symbol}
            -P "${CMAKE_SOURCE_DIR}/cmake/EmbedTextScript.cmake"
    DEPENDS "${abs_input}" "${CMAKE_SOURCE_DIR}/cmake/EmbedTextScript.cmake"
    COMMENT "Embedding ${input}"
    VERBATIM)
  # Compiled on its own, out of the target's unity batches: a batch would
  # include it by its build-folder path, and that path in the batch's text
  # would keep ccache from sharing the batch between two build folders of
  # one checkout (docs/BUILDING.md, "Time").
  set_source_files_properties("${output}" PROPERTIES
                              SKIP_UNITY_BUILD_INCLUSION ON)
  set(${out_var} "${output}" PARENT_SCOPE)
endfunction()

# tunefleet_embed_texts(<out_var> <namespace> <symbol> <input_file>
#                       [<symbol> <input_file>...])
# tunefleet_embed_text for each pair; <out_var> lists the generated .cc
# files, in the order of the pairs.
function(tunefleet_embed_texts out_var ns)
  set(pairs ${ARGN})
  set(outputs)
  while(pairs)
    list(POP_FRONT pairs symbol input)
    tunefleet_embed_text(embedded ${ns} ${symbol} ${input})
    list(APPEND outputs ${embedded})
  endwhile()
  set(${out_var} ${outputs} PARENT_SCOPE)
endfunction()
