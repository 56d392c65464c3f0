# ctest -P script: configure, build and run the consumer project against PREFIX.
file(REMOVE_RECURSE ${BIN})
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SRC} -B ${BIN} -G ${GENERATOR}
                        -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_CXX_COMPILER=${CXX}
                        -DKokkos_DIR=${Kokkos_DIR}
                RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "consumer: configure failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BIN} RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "consumer: build failed (${rc})")
endif()
execute_process(COMMAND ${BIN}/consumer RESULT_VARIABLE rc OUTPUT_VARIABLE out)
message(STATUS "${out}")
if(rc)
  message(FATAL_ERROR "consumer: run failed (${rc})")
endif()
