; Draftwise installer for Windows, Inno Setup 6 variant (optional; NSIS is the one CI builds).
; Per-user like the NSIS script: no administrator rights, %LOCALAPPDATA%\Programs\Draftwise.
;
;   iscc /DVERSION=0.1.0 /DSRCDIR=..\..\dist\Draftwise installer\windows\draftwise.iss
;
; Inno Setup's compiler runs only on Windows (GitHub's windows-2022 image has it; the
; windows-latest image no longer does: `choco install innosetup` there).

#ifndef VERSION
  #define VERSION "0.0.0"
#endif
#ifndef SRCDIR
  #define SRCDIR "..\..\dist\Draftwise"
#endif
#ifndef OUTDIR
  #define OUTDIR "..\..\dist"
#endif

[Setup]
AppId={{6B0C6E1E-5D3A-4C1B-9C55-0F3D9A7A2D11}
AppName=Draftwise
AppVersion={#VERSION}
AppVerName=Draftwise {#VERSION}
AppPublisher=Draftwise
VersionInfoVersion={#VERSION}
VersionInfoProductName=Draftwise
VersionInfoDescription=Draftwise installer
VersionInfoCopyright=MIT License
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=
DefaultDirName={localappdata}\Programs\Draftwise
DisableProgramGroupPage=yes
UninstallDisplayIcon={app}\Draftwise.exe
UninstallDisplayName=Draftwise
SetupIconFile=..\..\resources\icons\draftwise.ico
OutputDir={#OUTDIR}
OutputBaseFilename=Draftwise-{#VERSION}-setup-inno
Compression=lzma2/max
SolidCompression=yes
WizardStyle=modern
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible

[Languages]
Name: "english"; MessagesFile: "compiler:Default.isl"

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"

[InstallDelete]
; An update replaces the whole app folder: files a new version no longer has must go.
Type: filesandordirs; Name: "{app}\_internal"

[Files]
Source: "{#SRCDIR}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{userprograms}\Draftwise"; Filename: "{app}\Draftwise.exe"
Name: "{userdesktop}\Draftwise"; Filename: "{app}\Draftwise.exe"; Tasks: desktopicon

[Run]
Filename: "{app}\Draftwise.exe"; Description: "{cm:LaunchProgram,Draftwise}"; Flags: nowait postinstall skipifsilent

[UninstallDelete]
Type: filesandordirs; Name: "{app}\_internal"
