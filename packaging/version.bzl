"""kcr's version, the one place the packaged libraries take it from.

It names the shared libraries (libkcr_runtime.so.<version>, SONAME
libkcr_runtime.so.<major>), kcrConfigVersion.cmake (which accepts a request
for the same major.minor while the major is 0) and the .pc files' Version.
"""

KCR_VERSION = "0.1.0"
