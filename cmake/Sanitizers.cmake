# Sanitizer builds (deploy/sanitize.sh). -DTUNEFLEET_SANITIZE=ON compiles
# and links everything with AddressSanitizer and UndefinedBehaviorSanitizer.
option(TUNEFLEET_SANITIZE "Build with ASan and UBSan" OFF)
if(TUNEFLEET_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
