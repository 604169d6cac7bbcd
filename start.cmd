@echo off
rem JustKernel demo launcher for Windows: double-click it in Explorer, or run start.cmd.
rem It starts "uv run justkernel demo --open": the dashboard playing a recorded session in your
rem browser. It needs only uv (which brings its own Python) and a browser: no compiler, no
rem model, no network after the first start. Extra arguments go to "justkernel demo".
rem (Linux: ./start.sh; macOS: start.command.)
setlocal
cd /d "%~dp0"

rem A double-clicked script may not see a PATH changed since you logged in: look where
rem uv's own installer puts it, too.
where uv >nul 2>nul
if errorlevel 1 if exist "%USERPROFILE%\.local\bin\uv.exe" set "PATH=%USERPROFILE%\.local\bin;%PATH%"
where uv >nul 2>nul
if errorlevel 1 goto no_uv

echo Starting the JustKernel demo; your browser opens the dashboard (Ctrl+C stops it).
uv run justkernel demo --open %*
if errorlevel 1 goto failed
exit /b 0

:no_uv
echo JustKernel cannot start: uv is missing.
echo.
echo uv is the tool that installs JustKernel's Python and its packages. Install it with this
echo one command in PowerShell, then double-click start.cmd again:
echo.
echo     powershell -ExecutionPolicy ByPass -c "irm https://astral.sh/uv/install.ps1 | iex"
echo.
echo (With winget, "winget install --id=astral-sh.uv -e" works too.)
pause
exit /b 1

:failed
echo The demo stopped with an error; the lines above say why.
pause
exit /b 1
